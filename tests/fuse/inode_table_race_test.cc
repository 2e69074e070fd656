// InodeTable::lookup_if_unchanged: attributes fetched for a path must not be
// handed to an inode that got the path after they were fetched (found by
// smbkit-fsstress: stale sizes after rename-over on the same mount).
#include <gtest/gtest.h>

#include "fuse/inode_table.h"

namespace smbkit::fuse {
namespace {

TEST(InodeTableRace, RenameOverAfterStatIsRefused) {
  InodeTable t;
  uint64_t old_ino = t.lookup("s6");
  t.lookup("p2/.tmp");
  uint64_t since = t.clock();  // a lookup of s6 starts its stat here
  t.rename("p2/.tmp", "s6");   // ... and another process renames over s6
  uint64_t before = t.lookups(*t.find("s6"));
  EXPECT_FALSE(t.lookup_if_unchanged("s6", since));
  EXPECT_EQ(t.lookups(*t.find("s6")), before);  // nothing counted
  EXPECT_NE(*t.find("s6"), old_ino);
  // A stat started after the rename is fine.
  auto ino = t.lookup_if_unchanged("s6", t.clock());
  ASSERT_TRUE(ino);
  EXPECT_EQ(t.lookups(*ino), before + 1);
}

TEST(InodeTableRace, CreateAfterStatIsRefusedUnchangedPathAccepted) {
  InodeTable t;
  uint64_t a = t.lookup("a");
  uint64_t since = t.clock();
  EXPECT_EQ(t.lookup_if_unchanged("a", since), a);  // nothing happened to "a"
  t.detach("b");
  uint64_t since_b = t.clock();
  t.lookup("b");  // created (e.g. by create()) after the stat began
  EXPECT_FALSE(t.lookup_if_unchanged("b", since_b));
  // Unknown paths get a fresh inode.
  auto c = t.lookup_if_unchanged("c", since);
  ASSERT_TRUE(c);
  EXPECT_EQ(t.path_of(*c), "c");
  // A renamed directory's children moved too, so they count as changed.
  t.lookup("d/x");
  uint64_t since_d = t.clock();
  t.rename("d", "e");
  EXPECT_FALSE(t.lookup_if_unchanged("e/x", since_d));
}

TEST(InodeTableRace, OpenSeesPathChanges) {
  InodeTable t;
  uint64_t z = t.lookup("s6"), x = t.lookup("tmp");
  uint64_t since = t.clock();  // open(z) starts: path_of(z) == "s6"
  EXPECT_TRUE(t.unchanged_since(z, since));
  t.rename("tmp", "s6");  // x replaces z while the open is in flight
  EXPECT_FALSE(t.unchanged_since(z, since));  // z lost its path
  EXPECT_FALSE(t.unchanged_since(x, since));  // x moved
  EXPECT_TRUE(t.unchanged_since(x, t.clock()));
}

TEST(InodeTableRace, InodesInvolvedInARenameInFlightCountAsChanging) {
  InodeTable t;
  uint64_t w = t.lookup("shared/s4"), x = t.lookup("p2/tmp"), other = t.lookup("other");
  uint64_t since = t.clock();
  auto marked = t.begin_rename("p2/tmp", "shared/s4");
  // The server may already have moved the file: opens/stats of w and x by
  // path must not be trusted, even ones that start now.
  EXPECT_FALSE(t.unchanged_since(w, t.clock()));
  EXPECT_FALSE(t.unchanged_since(x, t.clock()));
  EXPECT_FALSE(t.lookup_if_unchanged("shared/s4", t.clock()));
  EXPECT_TRUE(t.unchanged_since(other, t.clock()));
  t.rename("p2/tmp", "shared/s4");
  t.end_rename(marked);
  EXPECT_FALSE(t.unchanged_since(w, t.clock()));  // replaced: no path
  EXPECT_FALSE(t.unchanged_since(x, since));
  EXPECT_TRUE(t.unchanged_since(x, t.clock()));
  // A failed rename: marks are dropped, paths unchanged.
  auto m2 = t.begin_rename("other", "shared/s4");
  t.end_rename(m2);
  EXPECT_TRUE(t.unchanged_since(other, t.clock()));
  EXPECT_EQ(t.find("shared/s4"), x);
}

}  // namespace
}  // namespace smbkit::fuse
