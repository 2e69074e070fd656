#include "base/secret.h"

#include <string.h>  // explicit_bzero

namespace smbkit {

void secure_wipe(void* p, size_t n) noexcept {
  if (p && n) explicit_bzero(p, n);
}

void wipe_string(std::string& s) noexcept {
  // resize() up to capacity() never reallocates, and makes the bytes past
  // size() ours to overwrite without reaching outside the string's range.
  s.resize(s.capacity());
  secure_wipe(s.data(), s.size());
  s.clear();
}

void wipe_bytes(Bytes& b) noexcept {
  b.resize(b.capacity());
  secure_wipe(b.data(), b.size());
  b.clear();
}

SecretString& SecretString::operator=(const SecretString& o) {
  if (this != &o) {
    wipe();
    s_ = o.s_;  // s_ is empty with its old capacity: no reallocation for a shorter value
  }
  return *this;
}

SecretString& SecretString::operator=(SecretString&& o) noexcept {
  if (this != &o) take(o.s_);
  return *this;
}

void SecretString::take(std::string& src) {
  wipe();
  s_.assign(src);
  wipe_string(src);
}

SecretBytes& SecretBytes::operator=(const SecretBytes& o) {
  if (this != &o) {
    wipe();
    b_ = o.b_;
  }
  return *this;
}

SecretBytes& SecretBytes::operator=(SecretBytes&& o) noexcept {
  if (this != &o) {
    wipe();
    b_ = std::move(o.b_);
  }
  return *this;
}

}  // namespace smbkit
