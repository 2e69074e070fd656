// Result<T>: the error channel of every protocol layer (no exceptions).
// An Error carries an NTSTATUS (from the wire or chosen by us) or an errno
// (from the OS), and a short context naming what failed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include "base/ntstatus.h"

namespace smbkit {

struct Error {
  uint32_t status = 0;  // NTSTATUS; 0 when the error is an errno
  int sys_errno = 0;    // errno when status == 0
  std::string context;  // what we were doing, e.g. "smb://h/s: tree connect"

  // "STATUS_BAD_NETWORK_NAME (no such share)" or "Connection refused".
  std::string what() const;
  // "<context>: <what>" (or just what() when no context).
  std::string message() const;
  // errno a POSIX caller should see.
  int to_errno() const;
  bool is(uint32_t s) const { return status == s; }
};

inline Error nt_error(uint32_t status, std::string context = {}) {
  return Error{status, 0, std::move(context)};
}
inline Error sys_error(int e, std::string context = {}) {
  return Error{0, e, std::move(context)};
}
// A malformed or hostile message from the peer.
inline Error protocol_error(std::string context) {
  return Error{STATUS_INVALID_NETWORK_RESPONSE, 0, std::move(context)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}      // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }
  Error&& take_error() { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error e) : err_(std::move(e)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }
  Error&& take_error() { return std::move(err_); }

 private:
  Error err_;
  bool ok_ = true;
};

inline Result<void> ok_result() { return {}; }

}  // namespace smbkit

#define SMBKIT_CONCAT_INNER(a, b) a##b
#define SMBKIT_CONCAT(a, b) SMBKIT_CONCAT_INNER(a, b)

// SMBKIT_TRY(auto x, expr): evaluate expr (a Result<T>), return its error
// from the enclosing function, or bind its value.
#define SMBKIT_TRY(decl, expr)                                  \
  auto SMBKIT_CONCAT(_smbkit_r_, __LINE__) = (expr);            \
  if (!SMBKIT_CONCAT(_smbkit_r_, __LINE__).ok())                \
    return SMBKIT_CONCAT(_smbkit_r_, __LINE__).take_error();    \
  decl = std::move(SMBKIT_CONCAT(_smbkit_r_, __LINE__).value())

// SMBKIT_CHECK(expr): for Result<void>.
#define SMBKIT_CHECK(expr)                                      \
  do {                                                          \
    auto _smbkit_c = (expr);                                    \
    if (!_smbkit_c.ok()) return _smbkit_c.take_error();         \
  } while (0)
