# Run at every build (the benchmatrix_source_revision target): writes OUTPUT, a C++ string literal
# with `git describe --always --dirty` of SOURCE_DIR ("unknown" outside a git checkout or without
# git). file(CONFIGURE) rewrites it only when the text changed, so an unchanged revision rebuilds
# nothing.
execute_process(COMMAND git describe --always --dirty
                WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE status ERROR_QUIET)
if(NOT status EQUAL 0 OR revision STREQUAL "")
  set(revision "unknown")
endif()
file(CONFIGURE OUTPUT "${OUTPUT}" CONTENT "\"${revision}\"\n")
