"""tests/prune_test_cache.py on a cache of fake entries: unused ones go after --max-age-days, then
the least recently used until the cache fits --max-gib; an entry used within the hour stays even
over the limit; each entry's .lock goes with it."""
import os
import tempfile
import time
import unittest

import prune_test_cache

HOUR = 3600
DAY = 86400


class PruneTestCache(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.cache = self.directory.name
        self.now = time.time()

    def tearDown(self):
        self.directory.cleanup()

    def entry(self, name, used_ago_s, size):
        path = os.path.join(self.cache, name)
        os.makedirs(path)
        with open(os.path.join(path, "manifest.json"), "wb") as f:
            f.write(b"x" * size)
        open(path + ".lock", "w").close()
        when = self.now - used_ago_s
        os.utime(os.path.join(path, "manifest.json"), (when, when))
        os.utime(path, (when, when))

    def remaining(self):
        return sorted(os.listdir(self.cache))

    def test_entries_unused_for_longer_than_the_age_limit_go_with_their_locks(self):
        self.entry("old", 8 * DAY, 10)
        self.entry("new", 2 * DAY, 10)
        removed, freed, kept = prune_test_cache.prune(self.cache, 7, 1 << 30, self.now)
        self.assertEqual((removed, freed, kept), (1, 10, 10))
        self.assertEqual(self.remaining(), ["new", "new.lock"])

    def test_over_the_size_limit_the_least_recently_used_go_first(self):
        self.entry("a", 3 * DAY, 400)
        self.entry("b", 2 * DAY, 400)
        self.entry("c", 2 * HOUR, 400)
        prune_test_cache.prune(self.cache, 7, 900, self.now)
        self.assertEqual(self.remaining(), ["b", "b.lock", "c", "c.lock"])

    def test_an_entry_used_within_the_hour_stays_even_over_the_limit(self):
        self.entry("busy", 60, 1000)
        removed, _, kept = prune_test_cache.prune(self.cache, 7, 10, self.now)
        self.assertEqual((removed, kept), (0, 1000))

    def test_a_missing_cache_is_nothing_to_do(self):
        self.assertEqual(prune_test_cache.prune(os.path.join(self.cache, "absent"), 7, 10), (0, 0, 0))


if __name__ == "__main__":
    unittest.main()
