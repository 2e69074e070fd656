#include "base/utf16.h"

#include <iconv.h>

#include <cerrno>

namespace smbkit {
namespace {

Result<Bytes> convert(const char* to, const char* from, ByteView in, const char* what) {
  Bytes out;
  if (in.empty()) return out;
  iconv_t cd = iconv_open(to, from);
  if (cd == reinterpret_cast<iconv_t>(-1)) return sys_error(errno, "iconv_open");
  out.resize(in.size() * 2 + 8);
  char* inp = const_cast<char*>(reinterpret_cast<const char*>(in.data()));
  size_t inleft = in.size();
  char* outp = reinterpret_cast<char*>(out.data());
  size_t outleft = out.size();
  size_t rc = iconv(cd, &inp, &inleft, &outp, &outleft);
  int e = errno;
  iconv_close(cd);
  if (rc == static_cast<size_t>(-1) || inleft != 0)
    return Error{STATUS_OBJECT_NAME_INVALID, 0, what};
  out.resize(out.size() - outleft);
  (void)e;
  return out;
}

}  // namespace

Result<Bytes> utf8_to_utf16le(std::string_view utf8) {
  return convert("UTF-16LE", "UTF-8", as_bytes(utf8), "name is not valid UTF-8");
}

Result<std::string> utf16le_to_utf8(ByteView utf16) {
  if (utf16.size() % 2) return Error{STATUS_OBJECT_NAME_INVALID, 0, "odd-length UTF-16 name"};
  auto r = convert("UTF-8", "UTF-16LE", utf16, "name is not valid UTF-16");
  if (!r) return r.take_error();
  return std::string(as_chars(*r));
}

}  // namespace smbkit
