// MS-NLMP 4.2.1 common values and the 4.2.4 NTLMv2 example, shared by the
// initiator and acceptor tests.
#pragma once

namespace smbkit::auth {

// ---- MS-NLMP 4.2.1 common values and 4.2.4 NTLMv2 example ----
// Values as published in MS-NLMP 4.2.4 (cross-checked against several
// independent transcriptions of the document).
inline constexpr const char* kServerChallenge = "0123456789abcdef";
inline constexpr const char* kClientChallenge = "aaaaaaaaaaaaaaaa";
inline constexpr const char* kRandomSessionKey = "55555555555555555555555555555555";
// 4.2.4.3 CHALLENGE_MESSAGE. TargetNameLen is 0x000c ("Server" in UTF-16LE);
// one transcription reads 0x0003, which contradicts TargetNameMaxLen.
inline constexpr const char* kSpecChallenge = R"(
    4e 54 4c 4d 53 53 50 00 02 00 00 00 0c 00 0c 00
    38 00 00 00 33 82 8a e2 01 23 45 67 89 ab cd ef
    00 00 00 00 00 00 00 00 24 00 24 00 44 00 00 00
    06 00 70 17 00 00 00 0f 53 00 65 00 72 00 76 00
    65 00 72 00 02 00 0c 00 44 00 6f 00 6d 00 61 00
    69 00 6e 00 01 00 0c 00 53 00 65 00 72 00 76 00
    65 00 72 00 00 00 00 00)";
// 4.2.4.3 AUTHENTICATE_MESSAGE.
inline constexpr const char* kSpecAuthenticate = R"(
    4e 54 4c 4d 53 53 50 00 03 00 00 00 18 00 18 00
    6c 00 00 00 54 00 54 00 84 00 00 00 0c 00 0c 00
    48 00 00 00 08 00 08 00 54 00 00 00 10 00 10 00
    5c 00 00 00 10 00 10 00 d8 00 00 00 35 82 88 e2
    05 01 28 0a 00 00 00 0f 44 00 6f 00 6d 00 61 00
    69 00 6e 00 55 00 73 00 65 00 72 00 43 00 4f 00
    4d 00 50 00 55 00 54 00 45 00 52 00 86 c3 50 97
    ac 9c ec 10 25 54 76 4a 57 cc cc 19 aa aa aa aa
    aa aa aa aa 68 cd 0a b8 51 e5 1c 96 aa bc 92 7b
    eb ef 6a 1c 01 01 00 00 00 00 00 00 00 00 00 00
    00 00 00 00 aa aa aa aa aa aa aa aa 00 00 00 00
    02 00 0c 00 44 00 6f 00 6d 00 61 00 69 00 6e 00
    01 00 0c 00 53 00 65 00 72 00 76 00 65 00 72 00
    00 00 00 00 00 00 00 00 c5 da d2 54 4f c9 79 90
    94 ce 1c e9 0b c9 d0 3e)";
// 4.2.4.1.3 temp.
inline constexpr const char* kSpecTemp = R"(
    01 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00
    aa aa aa aa aa aa aa aa 00 00 00 00 02 00 0c 00
    44 00 6f 00 6d 00 61 00 69 00 6e 00 01 00 0c 00
    53 00 65 00 72 00 76 00 65 00 72 00 00 00 00 00
    00 00 00 00)";
// The AV pairs of the example's TargetInfo: NbDomainName, NbComputerName, EOL.
inline constexpr const char* kSpecTargetInfo =
    "02000c0044006f006d00610069006e0001000c0053006500720076006500720000000000";

}  // namespace smbkit::auth
