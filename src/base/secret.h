// Passwords and keys that are overwritten when freed, so a core dump, a
// swapped page or a later heap reuse does not hand them out. base does not
// link OpenSSL, so the wipe is glibc's
// explicit_bzero, which (like OPENSSL_cleanse) the compiler may not drop as
// a dead store.
//
// What these cannot reach: copies made by code outside them (stream
// buffers, std::string temporaries of callers, OpenSSL's key schedules,
// which OpenSSL cleanses itself). They shrink the number of copies; they do
// not make a secret unobservable to a process that can read our memory
// (PR_SET_DUMPABLE is the other half, base/dumpable.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/bytes.h"

namespace smbkit {

// Overwrites n bytes at p with zeros, not removable by the optimiser.
void secure_wipe(void* p, size_t n) noexcept;
// Zeros every byte a string owns (its whole capacity, not just size(): a
// shrunk string keeps old bytes past its end), then empties it.
void wipe_string(std::string& s) noexcept;
void wipe_bytes(Bytes& b) noexcept;

// A password. Copies are independent and each is wiped; a move copies and
// wipes the source, because moving a short (SSO) std::string leaves its
// bytes behind in the source object.
class SecretString {
 public:
  SecretString() = default;
  SecretString(const char* s) : s_(s ? s : "") {}  // NOLINT: implicit like std::string
  SecretString(std::string_view s) : s_(s) {}      // NOLINT
  SecretString(const std::string& s) : s_(s) {}    // NOLINT
  // Takes the bytes and wipes the caller's string.
  SecretString(std::string&& s) { take(s); }  // NOLINT
  SecretString(const SecretString& o) : s_(o.s_) {}
  SecretString(SecretString&& o) noexcept { take(o.s_); }
  SecretString& operator=(const SecretString& o);
  SecretString& operator=(SecretString&& o) noexcept;
  ~SecretString() { wipe(); }

  const std::string& str() const { return s_; }
  operator const std::string&() const { return s_; }  // NOLINT: for APIs taking a string
  const char* c_str() const { return s_.c_str(); }
  bool empty() const { return s_.empty(); }
  size_t size() const { return s_.size(); }
  // Zeros the bytes now and empties the string.
  void wipe() noexcept { wipe_string(s_); }

  friend bool operator==(const SecretString& a, std::string_view b) { return a.s_ == b; }

 private:
  void take(std::string& src);
  std::string s_;
};

// A key (session, signing, sealing). Moves take the buffer (a vector has
// no inline storage, so nothing is left behind); the destructor wipes.
class SecretBytes {
 public:
  SecretBytes() = default;
  SecretBytes(ByteView b) : b_(b.begin(), b.end()) {}  // NOLINT
  SecretBytes(const Bytes& b) : b_(b) {}               // NOLINT
  SecretBytes(Bytes&& b) noexcept : b_(std::move(b)) {}  // NOLINT
  SecretBytes(const SecretBytes& o) : b_(o.b_) {}
  SecretBytes(SecretBytes&& o) noexcept : b_(std::move(o.b_)) {}
  SecretBytes& operator=(const SecretBytes& o);
  SecretBytes& operator=(SecretBytes&& o) noexcept;
  ~SecretBytes() { wipe(); }

  operator ByteView() const { return b_; }           // NOLINT
  operator const Bytes&() const { return b_; }       // NOLINT
  const Bytes& bytes() const { return b_; }
  const std::byte* data() const { return b_.data(); }
  Bytes::const_iterator begin() const { return b_.begin(); }
  Bytes::const_iterator end() const { return b_.end(); }
  bool empty() const { return b_.empty(); }
  size_t size() const { return b_.size(); }
  void wipe() noexcept { wipe_bytes(b_); }

  friend bool operator==(const SecretBytes& a, const SecretBytes& b) { return a.b_ == b.b_; }
  friend bool operator==(const SecretBytes& a, const Bytes& b) { return a.b_ == b; }

 private:
  Bytes b_;
};

}  // namespace smbkit
