#include "auth/spnego_codec.h"

namespace smbkit::auth {

using der::context_tag;
using der::Reader;
using der::Tlv;

namespace {

Oid oid_of(std::initializer_list<uint8_t> v) {
  Oid o;
  for (auto b : v) o.value.push_back(std::byte{b});
  return o;
}

// [n] EXPLICIT <tag>: the one element inside `field`, which must carry `tag`.
Result<Tlv> explicit_value(const Reader& parent, const Tlv& field, uint8_t tag, const char* what) {
  SMBKIT_TRY(Reader in, parent.enter(field));
  SMBKIT_TRY(Tlv t, in.expect(tag));
  SMBKIT_CHECK(in.finish(what));
  return t;
}

// [n] EXPLICIT OCTET STRING.
Result<Bytes> explicit_octets(const Reader& parent, const Tlv& field, const char* what) {
  SMBKIT_TRY(Tlv os, explicit_value(parent, field, der::kTagOctetString, what));
  return Bytes(os.value.begin(), os.value.end());
}

// [n] EXPLICIT OBJECT IDENTIFIER.
Result<Oid> explicit_oid(const Reader& parent, const Tlv& field, const char* what) {
  SMBKIT_TRY(Tlv t, explicit_value(parent, field, der::kTagOid, what));
  return der::decode_oid(t.value);
}

// MechTypeList ::= SEQUENCE OF MechType (RFC 4178 4.1).
Result<void> decode_mech_types(const Reader& parent, const Tlv& field, NegTokenInit& out) {
  SMBKIT_TRY(Reader in, parent.enter(field));
  SMBKIT_TRY(Tlv seq, in.expect(der::kTagSequence));
  SMBKIT_CHECK(in.finish("mechTypes"));
  out.mechTypesDer.assign(seq.encoding.begin(), seq.encoding.end());
  SMBKIT_TRY(Reader list, in.enter(seq));
  while (!list.empty()) {
    SMBKIT_TRY(Tlv t, list.expect(der::kTagOid));
    SMBKIT_TRY(Oid oid, der::decode_oid(t.value));
    out.mechTypes.push_back(std::move(oid));
  }
  if (out.mechTypes.empty()) return protocol_error("SPNEGO: empty mechTypes");
  return ok_result();
}

// MS-SPNG 2.2.1 NegHints ::= SEQUENCE { hintName [0] GeneralString OPTIONAL,
// hintAddress [1] OCTET STRING OPTIONAL }.
Result<NegHints> decode_neg_hints(const Reader& parent, const Tlv& seq) {
  SMBKIT_TRY(Reader in, parent.enter(seq));
  NegHints h;
  SMBKIT_TRY(auto name, in.optional(context_tag(0)));
  if (name) {
    SMBKIT_TRY(Tlv s, explicit_value(in, *name, der::kTagGeneralString, "hintName"));
    h.hintName = std::string(as_chars(s.value));
  }
  SMBKIT_TRY(auto addr, in.optional(context_tag(1)));
  if (addr) {
    SMBKIT_TRY(h.hintAddress, explicit_octets(in, *addr, "hintAddress"));
  }
  SMBKIT_CHECK(in.finish("negHints"));
  return h;
}

Bytes explicit_octets_tlv(unsigned n, ByteView v) {
  return der::tlv(context_tag(n), der::tlv(der::kTagOctetString, v));
}

void append(Bytes& out, const Bytes& b) { out.insert(out.end(), b.begin(), b.end()); }

}  // namespace

const Oid& oid_spnego() {
  static const Oid o = oid_of({0x2b, 0x06, 0x01, 0x05, 0x05, 0x02});
  return o;
}
const Oid& oid_ntlmssp() {
  static const Oid o = oid_of({0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a});
  return o;
}
const Oid& oid_krb5() {
  static const Oid o = oid_of({0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02});
  return o;
}
const Oid& oid_ms_krb5() {
  static const Oid o = oid_of({0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02});
  return o;
}
const Oid& oid_negoex() {
  static const Oid o = oid_of({0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x1e});
  return o;
}

Bytes encode_mech_type_list(std::span<const Oid> mech_types) {
  Bytes list;
  for (const auto& m : mech_types) append(list, der::encode_oid(m));
  return der::tlv(der::kTagSequence, list);
}

// ---- RFC 4178 4.2.1 NegTokenInit / MS-SPNG 2.2.1 NegTokenInit2 ----

Result<NegTokenInit> decode_neg_token_init(ByteView token) {
  Reader top(token);
  Reader choice_parent = top;
  Tlv choice;
  if (top.peek_tag() == der::kTagApplication0) {
    // RFC 2743 3.1 InitialContextToken: thisMech, then the inner token.
    SMBKIT_TRY(Reader app, top.enter(der::kTagApplication0));
    SMBKIT_TRY(Tlv mech, app.expect(der::kTagOid));
    SMBKIT_TRY(Oid oid, der::decode_oid(mech.value));
    if (oid != oid_spnego()) return protocol_error("SPNEGO: GSS token is not SPNEGO");
    SMBKIT_TRY(choice, app.expect(context_tag(0)));
    SMBKIT_CHECK(app.finish("GSS InitialContextToken"));
    choice_parent = app;
  } else {
    SMBKIT_TRY(choice, top.expect(context_tag(0)));
  }
  SMBKIT_CHECK(top.finish("SPNEGO token"));

  SMBKIT_TRY(Reader ch, choice_parent.enter(choice));
  SMBKIT_TRY(Reader f, ch.enter(der::kTagSequence));
  SMBKIT_CHECK(ch.finish("negTokenInit"));

  NegTokenInit out;
  SMBKIT_TRY(Tlv mt, f.expect(context_tag(0)));
  SMBKIT_CHECK(decode_mech_types(f, mt, out));
  SMBKIT_TRY(auto req, f.optional(context_tag(1)));
  if (req) {
    SMBKIT_TRY(Tlv bits, explicit_value(f, *req, der::kTagBitString, "reqFlags"));
    out.reqFlags = Bytes(bits.value.begin(), bits.value.end());
  }
  SMBKIT_TRY(auto tok, f.optional(context_tag(2)));
  if (tok) {
    SMBKIT_TRY(out.mechToken, explicit_octets(f, *tok, "mechToken"));
  }
  // [3] is mechListMIC (OCTET STRING) in RFC 4178 but negHints (SEQUENCE)
  // in MS-SPNG's NegTokenInit2; the inner tag tells them apart.
  SMBKIT_TRY(auto f3, f.optional(context_tag(3)));
  if (f3) {
    SMBKIT_TRY(Reader in, f.enter(*f3));
    if (in.peek_tag() == der::kTagSequence) {
      SMBKIT_TRY(Tlv seq, in.next());
      SMBKIT_TRY(out.negHints, decode_neg_hints(in, seq));
      SMBKIT_CHECK(in.finish("negHints"));
    } else {
      SMBKIT_TRY(out.mechListMIC, explicit_octets(f, *f3, "mechListMIC"));
    }
  }
  if (out.negHints) {
    SMBKIT_TRY(auto f4, f.optional(context_tag(4)));
    if (f4) {
      SMBKIT_TRY(out.mechListMIC, explicit_octets(f, *f4, "mechListMIC"));
    }
  }
  SMBKIT_CHECK(f.finish("negTokenInit"));
  return out;
}

Bytes encode_neg_token_init(std::span<const Oid> mech_types, ByteView mech_token) {
  Bytes fields = der::tlv(context_tag(0), encode_mech_type_list(mech_types));
  if (!mech_token.empty()) append(fields, explicit_octets_tlv(2, mech_token));
  Bytes inner = der::encode_oid(oid_spnego());
  append(inner, der::tlv(context_tag(0), der::tlv(der::kTagSequence, fields)));
  return der::tlv(der::kTagApplication0, inner);
}

Bytes encode_neg_token_init2(std::span<const Oid> mech_types, std::string_view hint_name) {
  Bytes fields = der::tlv(context_tag(0), encode_mech_type_list(mech_types));
  Bytes hints = der::tlv(context_tag(0), der::tlv(der::kTagGeneralString, as_bytes(hint_name)));
  append(fields, der::tlv(context_tag(3), der::tlv(der::kTagSequence, hints)));
  Bytes inner = der::encode_oid(oid_spnego());
  append(inner, der::tlv(context_tag(0), der::tlv(der::kTagSequence, fields)));
  return der::tlv(der::kTagApplication0, inner);
}

// ---- RFC 4178 4.2.2 NegTokenResp ----

Result<NegTokenResp> decode_neg_token_resp(ByteView token) {
  Reader top(token);
  SMBKIT_TRY(Reader ch, top.enter(context_tag(1)));
  SMBKIT_CHECK(top.finish("SPNEGO token"));
  SMBKIT_TRY(Reader f, ch.enter(der::kTagSequence));
  SMBKIT_CHECK(ch.finish("negTokenResp"));

  NegTokenResp out;
  SMBKIT_TRY(auto st, f.optional(context_tag(0)));
  if (st) {
    SMBKIT_TRY(Tlv e, explicit_value(f, *st, der::kTagEnumerated, "negState"));
    if (e.value.size() != 1 || static_cast<uint8_t>(e.value[0]) > 3)
      return protocol_error("SPNEGO: bad negState");
    out.negState = static_cast<NegState>(e.value[0]);
  }
  SMBKIT_TRY(auto mech, f.optional(context_tag(1)));
  if (mech) {
    SMBKIT_TRY(out.supportedMech, explicit_oid(f, *mech, "supportedMech"));
  }
  SMBKIT_TRY(auto tok, f.optional(context_tag(2)));
  if (tok) {
    SMBKIT_TRY(out.responseToken, explicit_octets(f, *tok, "responseToken"));
  }
  SMBKIT_TRY(auto mic, f.optional(context_tag(3)));
  if (mic) {
    SMBKIT_TRY(out.mechListMIC, explicit_octets(f, *mic, "mechListMIC"));
  }
  SMBKIT_CHECK(f.finish("negTokenResp"));
  return out;
}

Bytes encode_neg_token_resp(const NegTokenResp& r) {
  Bytes fields;
  if (r.negState) {
    std::byte v{static_cast<uint8_t>(*r.negState)};
    append(fields, der::tlv(context_tag(0), der::tlv(der::kTagEnumerated, ByteView(&v, 1))));
  }
  if (r.supportedMech) append(fields, der::tlv(context_tag(1), der::encode_oid(*r.supportedMech)));
  if (r.responseToken) append(fields, explicit_octets_tlv(2, *r.responseToken));
  if (r.mechListMIC) append(fields, explicit_octets_tlv(3, *r.mechListMIC));
  return der::tlv(context_tag(1), der::tlv(der::kTagSequence, fields));
}

Bytes encode_neg_token_resp(ByteView response_token, ByteView mech_list_mic) {
  NegTokenResp r;
  if (!response_token.empty())
    r.responseToken = Bytes(response_token.begin(), response_token.end());
  if (!mech_list_mic.empty()) r.mechListMIC = Bytes(mech_list_mic.begin(), mech_list_mic.end());
  return encode_neg_token_resp(r);
}

}  // namespace smbkit::auth
