#!/usr/bin/env bash
# Fills third_party_cache/ with what a machine without internet (the GPU machine: Ubuntu 24.04,
# Boost's headers without its compiled libraries, no RapidJSON, no doctest, no torchax) needs to
# build benchmatrix; run it where Debian's mirrors and PyPI are reachable, then carry
# third_party_cache/ to that machine (README.md, "Building on the GPU machine"). CMakeLists.txt
# looks for each piece at the path given below:
#   rapidjson/usr/include              Debian's rapidjson-dev (apt-get download + dpkg -x)
#   doctest/usr/include                Debian's doctest-dev (likewise)
#   sqlite/usr/include, sqlite/usr/lib Debian's libsqlite3-dev (likewise: sqlite3.h and the static
#                                      libsqlite3.a the regression gate's history links)
#   boost_program_options_<M>_<m>/src  Boost.Program_options' sources of the target's Boost
#                                      version (its headers are the target's own), from Debian's
#                                      boost<M>.<m> orig tarball; the tarball's SHA-256 is checked
#                                      against Debian's Sources index, whose SHA-256 is checked
#                                      against the suite's InRelease, whose signature gpgv checks
#                                      with Debian's archive keyring
#   pjrt/include, python               the PJRT C API header and torchax (scripts/fetch_pjrt_header.sh)
# Idempotent: a piece already in place is kept (delete its directory to fetch it again). Each piece
# is unpacked beside its place and moved in whole, so an interrupted run leaves no half piece.
#
# Usage: scripts/prepare_offline_build.sh [--boost-version=M.m]
#   --boost-version  the target machine's Boost (what its boost/version.hpp says), default 1.83
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian), DEBIAN_KEYRING (default
# /usr/share/keyrings/debian-archive-keyring.gpg), PYTHON (pip for fetch_pjrt_header.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

BOOST_VERSION=1.83  # the GPU machine's (Ubuntu 24.04's libboost1.83-dev)
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_KEYRING=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
# Suites searched in order for the boost<M>.<m> source package (the first that has it is used).
DEBIAN_SUITES=(trixie bookworm-backports bookworm sid)
CACHE=third_party_cache

fail() {
  echo "prepare_offline_build.sh: error: $*" >&2
  exit 1
}

while (($#)); do
  case $1 in
    --boost-version=*) BOOST_VERSION=${1#*=} ;;
    --boost-version) (($# > 1)) || fail "--boost-version needs a value (M.m, e.g. 1.83)"
                     BOOST_VERSION=$2; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown argument '$1' (expected --boost-version=M.m, e.g. --boost-version=1.83)" ;;
  esac
  shift
done
[[ $BOOST_VERSION =~ ^([0-9]+)\.([0-9]+)(\.0)?$ ]] ||
  fail "--boost-version='$BOOST_VERSION' is not a Boost version (expected M.m such as 1.83)"
boost_major=${BASH_REMATCH[1]}
boost_minor=${BASH_REMATCH[2]}

for tool in apt-get dpkg curl gpgv sha256sum xz tar; do
  command -v "$tool" >/dev/null || fail "'$tool' is not installed; this script needs it"
done

mkdir -p "$CACHE"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Unpacks Debian package $1 (a header-only -dev package) into $CACHE/$2 unless $CACHE/$2/$3 exists.
unpack_debian_package() {
  local package=$1 directory=$CACHE/$2 marker=$CACHE/$2/$3
  [[ -f $marker ]] && return
  echo "Fetching $package (apt-get download from this machine's apt sources)"
  (cd "$work" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$package") ||
    fail "could not fetch Debian package $package with apt-get download (from the apt sources" \
         "in /etc/apt/sources.list*); run 'apt-get update' and try again"
  rm -rf "$directory.tmp"
  dpkg -x "$work/${package}"_*.deb "$directory.tmp"
  [[ -f $directory.tmp/$3 ]] || fail "Debian package $package holds no $3"
  rm -rf "$directory" && mv "$directory.tmp" "$directory"
  echo "  $package -> $directory"
}

unpack_debian_package rapidjson-dev rapidjson usr/include/rapidjson/document.h
unpack_debian_package doctest-dev doctest usr/include/doctest/doctest.h
unpack_debian_package libsqlite3-dev sqlite usr/include/sqlite3.h

# Downloads $DEBIAN_MIRROR/$1 to $2, or fails naming the address.
download() {
  curl --fail --silent --show-error --location --retry 3 -o "$2" "$DEBIAN_MIRROR/$1" ||
    fail "could not download $DEBIAN_MIRROR/$1"
}

# Boost.Program_options' sources, from the orig tarball of Debian's boost<M>.<m> source package.
boost_sources=$CACHE/boost_program_options_${boost_major}_${boost_minor}/src
if ! compgen -G "$boost_sources/*.cpp" >/dev/null; then
  source_package=boost$boost_major.$boost_minor
  [[ -f $DEBIAN_KEYRING ]] ||
    fail "Debian's archive keyring $DEBIAN_KEYRING is missing (package debian-archive-keyring;" \
         "or set DEBIAN_KEYRING): it verifies the Debian index that gives $source_package's checksum"
  found=""
  for suite in "${DEBIAN_SUITES[@]}"; do
    download "dists/$suite/InRelease" "$work/InRelease"
    gpgv --quiet --keyring "$DEBIAN_KEYRING" --output "$work/Release" "$work/InRelease" 2>"$work/gpgv.log" ||
      fail "the signature of $DEBIAN_MIRROR/dists/$suite/InRelease does not verify with" \
           "$DEBIAN_KEYRING: $(cat "$work/gpgv.log")"
    # "Checksums: SHA256" section of the Release file: " <sha256> <size> main/source/Sources.xz".
    sources_sha256=$(awk '/^SHA256:/ {s = 1; next} /^[^ ]/ {s = 0}
                          s && $3 == "main/source/Sources.xz" {print $1}' "$work/Release")
    [[ -n $sources_sha256 ]] || fail "$DEBIAN_MIRROR/dists/$suite/InRelease lists no main/source/Sources.xz"
    download "dists/$suite/main/source/Sources.xz" "$work/Sources.xz"
    echo "$sources_sha256  $work/Sources.xz" | sha256sum --check --quiet ||
      fail "$DEBIAN_MIRROR/dists/$suite/main/source/Sources.xz does not match its SHA-256 in InRelease"
    # The stanza of $source_package: its pool directory and its orig tarball's SHA-256 and name.
    # awk reads to the end (no early exit, which would break xz's pipe) and keeps the first stanza.
    found=$(xz -dc "$work/Sources.xz" | awk -v package="$source_package" '
      /^Package: / {p = ($2 == package) && !done; s = 0}
      !p {next}
      /^Directory: / {directory = $2}
      /^Checksums-Sha256:/ {s = 1; next}
      /^[^ ]/ {s = 0}
      s && $3 ~ /\.orig\.tar\.(xz|gz|bz2)$/ {sha256 = $1; name = $3; done = 1}
      END {if (done) print directory, sha256, name}')
    [[ -n $found ]] && break
  done
  [[ -n $found ]] ||
    fail "no Debian source package $source_package (Boost $BOOST_VERSION) in suites" \
         "${DEBIAN_SUITES[*]} at $DEBIAN_MIRROR; give the target's Boost version, or unpack" \
         "that version's libs/program_options/src into $boost_sources by hand"
  read -r directory tarball_sha256 tarball <<<"$found"
  echo "Fetching $DEBIAN_MIRROR/$directory/$tarball (Debian $suite; only libs/program_options/src is kept)"
  download "$directory/$tarball" "$work/$tarball"
  echo "$tarball_sha256  $work/$tarball" | sha256sum --check --quiet ||
    fail "$DEBIAN_MIRROR/$directory/$tarball does not match its SHA-256 $tarball_sha256 in Debian's Sources index"
  mkdir -p "$work/boost"
  tar -xf "$work/$tarball" -C "$work/boost" --wildcards '*/libs/program_options/src/*'
  extracted=$(find "$work/boost" -type d -path '*/libs/program_options/src' | head -n 1)
  compgen -G "$extracted/*.cpp" >/dev/null || fail "$tarball holds no libs/program_options/src/*.cpp"
  mkdir -p "$(dirname "$boost_sources")"
  rm -rf "$boost_sources.tmp" && cp -r "$extracted" "$boost_sources.tmp"
  rm -rf "$boost_sources" && mv "$boost_sources.tmp" "$boost_sources"
  echo "  Boost.Program_options $BOOST_VERSION sources ($tarball, SHA-256 verified) -> $boost_sources"
  rm -f "$work/$tarball"
fi

# The PJRT C API header and torchax, from PyPI (the script keeps what it already fetched).
bash scripts/fetch_pjrt_header.sh ||
  fail "could not fetch the PJRT C API header (tensorflow-cpu wheel) or torchax from PyPI with pip" \
       "(scripts/fetch_pjrt_header.sh; pip's message is above)"

echo "third_party_cache/ is ready for a machine with Boost $BOOST_VERSION headers; carry it (du: $(du -sh "$CACHE" | cut -f1)):"
for path in rapidjson/usr/include doctest/usr/include \
            "boost_program_options_${boost_major}_${boost_minor}/src" pjrt/include python; do
  [[ -e $CACHE/$path ]] || fail "$CACHE/$path is missing after the run"
  echo "  $CACHE/$path"
done
