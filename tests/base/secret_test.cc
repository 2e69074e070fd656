// The wiping string and byte types: the bytes they held are zero after a
// wipe, a move and a destruction (checked in memory this test owns, never
// in freed memory).
#include "base/secret.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace smbkit {
namespace {

bool all_zero(const char* p, size_t n) {
  return std::all_of(p, p + n, [](char c) { return c == 0; });
}

// Whether [p, p+n) still holds the secret. Searches for all but its first
// byte: emptying a std::string writes a NUL over the first one anyway, so
// only the rest tells a wiped buffer from an emptied one.
bool holds(const void* p, size_t n, std::string_view secret) {
  const char* b = static_cast<const char*>(p);
  std::string_view tail = secret.substr(1);
  return std::search(b, b + n, tail.begin(), tail.end()) != b + n;
}

TEST(Secret, WipeZerosTheWholeBuffer) {
  SecretString s(std::string(100, 'x'));
  // A wipe keeps the allocation (clear() does not free): its bytes are
  // still ours to read through the string's own pointer.
  const std::string& inner = s.str();
  const char* p = inner.data();
  size_t cap = inner.capacity();
  s.wipe();
  EXPECT_TRUE(s.empty());
  ASSERT_EQ(inner.data(), p);
  EXPECT_TRUE(all_zero(p, cap));
}

TEST(Secret, WipeStringReachesPastSize) {
  // A shrunk string keeps the old bytes behind its end.
  std::string s(64, 'p');
  s.resize(3);
  wipe_string(s);
  // The allocation stays; read it through the string's own pointer.
  EXPECT_TRUE(all_zero(s.data(), s.capacity()));
}

TEST(Secret, TakingAShortStringWipesTheSource) {
  // Short enough for the small-string buffer: a plain move would leave
  // "hunter2" inside src.
  std::string src = "hunter2";
  SecretString s(std::move(src));
  EXPECT_EQ(s, "hunter2");
  EXPECT_FALSE(holds(&src, sizeof src, "hunter2"));
  EXPECT_TRUE(all_zero(src.data(), src.capacity()));
}

TEST(Secret, MovedFromSecretIsWiped) {
  SecretString a("short-pw");
  SecretString b(std::move(a));
  EXPECT_EQ(b, "short-pw");
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): checking exactly that
  // The source object's inline buffer no longer holds it.
  EXPECT_FALSE(holds(&a, sizeof a, "short-pw"));
  SecretString c;
  c = std::move(b);
  EXPECT_EQ(c, "short-pw");
  EXPECT_FALSE(holds(&b, sizeof b, "short-pw"));
}

TEST(Secret, DestructorWipesInlineBytes) {
  // The object lives in storage the test owns; after its destructor the
  // storage must not hold the (inline, short) password any more.
  alignas(SecretString) unsigned char storage[sizeof(SecretString)];
  auto* s = new (storage) SecretString("pw-1234");
  ASSERT_EQ(*s, "pw-1234");
  s->~SecretString();
  EXPECT_FALSE(holds(storage, sizeof storage, "pw-1234"));
}

TEST(Secret, BytesWipeAndMove) {
  SecretBytes k(Bytes(32, std::byte{0xAB}));
  const Bytes& inner = k.bytes();
  const std::byte* p = inner.data();
  k.wipe();
  EXPECT_TRUE(k.empty());
  ASSERT_EQ(inner.data(), p);
  EXPECT_TRUE(all_zero(reinterpret_cast<const char*>(p), 32));

  SecretBytes a(Bytes(16, std::byte{1}));
  SecretBytes b;
  b = std::move(a);
  EXPECT_EQ(b.size(), 16u);
  ByteView v = b;
  EXPECT_EQ(v[0], std::byte{1});
  Bytes copy = b;  // plain copies stay possible where an API wants Bytes
  EXPECT_EQ(copy.size(), 16u);
}

}  // namespace
}  // namespace smbkit
