#include "base/utf16.h"

#include <iconv.h>

#include <algorithm>
#include <cerrno>

namespace smbkit {
namespace {

// One conversion descriptor per direction and thread, opened on first use
// and kept: iconv_open looks its converter up by name (a cache search and
// allocations), which cost more than the conversion of a short name. A
// descriptor is per thread because iconv keeps shift state in it; each
// conversion starts by resetting that state.
class Converter {
 public:
  Converter(const char* to, const char* from) : cd_(iconv_open(to, from)) {}
  ~Converter() {
    if (ok()) iconv_close(cd_);
  }
  Converter(const Converter&) = delete;
  Converter& operator=(const Converter&) = delete;
  bool ok() const { return cd_ != reinterpret_cast<iconv_t>(-1); }
  iconv_t get() const { return cd_; }

 private:
  iconv_t cd_;
};

Result<Bytes> convert(const Converter& cv, ByteView in, const char* what) {
  Bytes out;
  if (in.empty()) return out;
  if (!cv.ok()) return sys_error(EINVAL, "iconv_open");
  iconv(cv.get(), nullptr, nullptr, nullptr, nullptr);  // initial state
  out.resize(in.size() * 2 + 8);
  char* inp = const_cast<char*>(reinterpret_cast<const char*>(in.data()));
  size_t inleft = in.size();
  char* outp = reinterpret_cast<char*>(out.data());
  size_t outleft = out.size();
  size_t rc = iconv(cv.get(), &inp, &inleft, &outp, &outleft);
  if (rc == static_cast<size_t>(-1) || inleft != 0) return Error{STATUS_OBJECT_NAME_INVALID, 0, what};
  out.resize(out.size() - outleft);
  return out;
}

}  // namespace

Result<Bytes> utf8_to_utf16le(std::string_view utf8) {
  // ASCII (most names) is each byte widened: no converter needed.
  if (std::all_of(utf8.begin(), utf8.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    Bytes out(utf8.size() * 2);
    for (size_t i = 0; i < utf8.size(); i++) {
      out[2 * i] = static_cast<std::byte>(utf8[i]);
      out[2 * i + 1] = std::byte{0};
    }
    return out;
  }
  thread_local const Converter cv("UTF-16LE", "UTF-8");
  return convert(cv, as_bytes(utf8), "name is not valid UTF-8");
}

Result<std::string> utf16le_to_utf8(ByteView utf16) {
  if (utf16.size() % 2) return Error{STATUS_OBJECT_NAME_INVALID, 0, "odd-length UTF-16 name"};
  bool ascii = true;
  for (size_t i = 0; i < utf16.size() && ascii; i += 2)
    ascii = utf16[i + 1] == std::byte{0} && static_cast<uint8_t>(utf16[i]) < 0x80;
  if (ascii) {
    std::string out(utf16.size() / 2, '\0');
    for (size_t i = 0; i < out.size(); i++) out[i] = static_cast<char>(utf16[2 * i]);
    return out;
  }
  thread_local const Converter cv("UTF-8", "UTF-16LE");
  auto r = convert(cv, utf16, "name is not valid UTF-16");
  if (!r) return r.take_error();
  return std::string(as_chars(*r));
}

}  // namespace smbkit
