// rockdoc serve's authentication pieces: SHA-256, HMAC-SHA-256, PBKDF2 and
// base64 against their specifications' vectors (FIPS 180-4 examples, RFC
// 4231, RFC 7914, RFC 4648), and the SCRAM-SHA-256 server against RFC
// 7677's example conversation, plus the ways a conversation must fail.
#include <gtest/gtest.h>

#include "wire/crypto.h"
#include "wire/scram.h"

namespace rockdoc::wire {
namespace {

std::string Hex(std::string_view s) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

TEST(CryptoTest, Sha256) {
  EXPECT_EQ(Hex(Sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex(Sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // Two blocks after padding.
  EXPECT_EQ(Hex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Hex(Sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(CryptoTest, HmacSha256Rfc4231) {
  EXPECT_EQ(Hex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Case 6: a key longer than the block is hashed first.
  EXPECT_EQ(Hex(HmacSha256(std::string(131, '\xaa'),
                           "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(CryptoTest, Pbkdf2Rfc7914) {
  EXPECT_EQ(Hex(Pbkdf2HmacSha256("passwd", "salt", 1, 64)),
            "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
            "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783");
  EXPECT_EQ(Hex(Pbkdf2HmacSha256("Password", "NaCl", 80000, 64)),
            "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56"
            "a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d");
}

TEST(CryptoTest, Base64Rfc4648) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},         {"f", "Zg=="},        {"fo", "Zm8="},         {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (auto [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    EXPECT_EQ(Base64Decode(encoded), std::optional<std::string>(plain));
  }
  for (const char* bad : {"Zg=", "Zg", "Z===", "Zh==", "Zm9v!", "=Zm9", "Zg==Zg=="}) {
    EXPECT_EQ(Base64Decode(bad), std::nullopt) << bad;
  }
  EXPECT_TRUE(ConstantTimeEqual("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "ab"));
  EXPECT_EQ(RandomBytes(28).size(), 28u);
  EXPECT_NE(RandomBytes(16), RandomBytes(16));
}

// RFC 7677 section 3: user "user", password "pencil".
constexpr char kClientFirst[] = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr char kServerNonce[] = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr char kClientFinal[] =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";

ScramServer::Lookup Rfc7677User() {
  return [](std::string_view user) -> std::optional<ScramCredentials> {
    if (user != "user") return std::nullopt;
    return MakeScramCredentials("pencil", *Base64Decode("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096);
  };
}

TEST(ScramTest, Rfc7677Conversation) {
  ScramServer server;
  auto first = server.Start(kClientFirst, Rfc7677User(), kServerNonce);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first,
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
  auto final = server.Finish(kClientFinal);
  ASSERT_TRUE(final.ok()) << final.status();
  EXPECT_EQ(*final, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
  EXPECT_TRUE(server.done());
  EXPECT_EQ(server.user(), "user");
}

// SCRAM-SHA-1's digests: FIPS 180-4's SHA-1, RFC 2202's HMAC-SHA-1, RFC
// 6070's PBKDF2-HMAC-SHA-1, RFC 1321's MD5.
TEST(CryptoTest, Sha1HmacPbkdf2AndMd5) {
  EXPECT_EQ(Hex(Digest(Hash::kSha1, "abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Hex(Hmac(Hash::kSha1, "Jefe", "what do ya want for nothing?")),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
  EXPECT_EQ(Hex(Pbkdf2Hmac(Hash::kSha1, "password", "salt", 4096, 20)),
            "4b007901b765489abead49d926f721d065a429c1");
  EXPECT_EQ(Md5Hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Md5Hex("message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
}

// RFC 5802 section 5: SCRAM-SHA-1, user "user", password "pencil" (as it
// is: the RFC's conversation, without MongoDB's digest).
TEST(ScramTest, Rfc5802Sha1Conversation) {
  ScramServer server(ScramMechanism::kSha1);
  auto lookup = [](std::string_view user) -> std::optional<ScramCredentials> {
    if (user != "user") return std::nullopt;
    return MakeScramCredentials("pencil", *Base64Decode("QSXCR+Q6sek8bf92"), 4096,
                                ScramMechanism::kSha1);
  };
  auto first = server.Start("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL", lookup, "3rfcNHYJY1ZVvWVs7j");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096");
  auto final = server.Finish(
      "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=");
  ASSERT_TRUE(final.ok()) << final.status();
  EXPECT_EQ(*final, "v=rmF9pqV8S7suAoZWja4dJRkFsKQ=");
  EXPECT_TRUE(server.done());
}

// MongoDB's SCRAM-SHA-1 password: hex md5("user:mongo:password"), which
// drivers compute and send through SCRAM as the password.
TEST(ScramTest, MongoDbSha1PasswordDigest) {
  EXPECT_EQ(ScramPassword(ScramMechanism::kSha1, "user", "pencil").value(),
            Md5Hex("user:mongo:pencil"));
  EXPECT_EQ(ScramPassword(ScramMechanism::kSha256, "user", "pencil").value(), "pencil");
  // SCRAM-SHA-1's digest is of the password as given, SCRAM-SHA-256's
  // password is SASLprep'd.
  EXPECT_EQ(ScramPassword(ScramMechanism::kSha1, "user", "I\u00ADX").value(),
            Md5Hex("user:mongo:I\u00ADX"));
  EXPECT_EQ(ScramPassword(ScramMechanism::kSha256, "user", "I\u00ADX").value(), "IX");
  EXPECT_EQ(ParseScramMechanism("SCRAM-SHA-1"), ScramMechanism::kSha1);
  EXPECT_EQ(ParseScramMechanism("SCRAM-SHA-256"), ScramMechanism::kSha256);
  EXPECT_EQ(ParseScramMechanism("PLAIN"), std::nullopt);
  // A SHA-256 proof (32 bytes) is refused by a SHA-1 conversation.
  ScramServer server(ScramMechanism::kSha1);
  ASSERT_TRUE(server.Start(kClientFirst, Rfc7677User(), kServerNonce).ok());
  EXPECT_EQ(server.Finish(kClientFinal).status().code(), ErrorCode::kAuthenticationFailed);
}

TEST(ScramTest, FailuresAreAuthenticationFailed) {
  {
    ScramServer server;  // a wrong proof (one character changed)
    ASSERT_TRUE(server.Start(kClientFirst, Rfc7677User(), kServerNonce).ok());
    std::string bad = kClientFinal;
    bad[bad.size() - 3] = 'W';
    EXPECT_EQ(server.Finish(bad).status().code(), ErrorCode::kAuthenticationFailed);
    EXPECT_FALSE(server.done());
    // One try per conversation: the right proof after a wrong one fails too.
    EXPECT_FALSE(server.Finish(kClientFinal).ok());
  }
  {
    ScramServer server;  // another nonce
    ASSERT_TRUE(server.Start(kClientFirst, Rfc7677User(), "other").ok());
    EXPECT_EQ(server.Finish(kClientFinal).status().code(), ErrorCode::kAuthenticationFailed);
  }
  {
    ScramServer server;  // an unknown user
    EXPECT_EQ(server.Start("n,,n=nobody,r=abc", Rfc7677User()).status().code(),
              ErrorCode::kAuthenticationFailed);
  }
  {
    ScramServer server;  // the wrong password's credentials
    auto lookup = [](std::string_view) -> std::optional<ScramCredentials> {
      return MakeScramCredentials("pencil2", *Base64Decode("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096);
    };
    ASSERT_TRUE(server.Start(kClientFirst, lookup, kServerNonce).ok());
    EXPECT_EQ(server.Finish(kClientFinal).status().code(), ErrorCode::kAuthenticationFailed);
  }
  for (const char* bad : {"", "x", "n,", "n,,", "n,,r=abc", "n,,n=user", "n,,n=us=er,r=a",
                          "n,,n=user,r=a,m=ext"}) {
    ScramServer server;
    EXPECT_EQ(server.Start(bad, Rfc7677User()).status().code(), ErrorCode::kBadValue) << bad;
  }
  ScramServer binding;
  EXPECT_EQ(binding.Start("p=tls-unique,,n=user,r=a", Rfc7677User()).status().code(),
            ErrorCode::kMechanismUnavailable);
  ScramServer authzid;
  EXPECT_EQ(authzid.Start("n,a=admin,n=user,r=a", Rfc7677User()).status().code(),
            ErrorCode::kMechanismUnavailable);
  ScramServer early;
  EXPECT_FALSE(early.Finish(kClientFinal).ok());
}

// RFC 4013 section 3's examples, and RFC 3454's space mapping.
TEST(ScramTest, SaslPrepRfc4013Examples) {
  EXPECT_EQ(SaslPrep("I\u00ADX").value(), "IX");      // SOFT HYPHEN mapped to nothing
  EXPECT_EQ(SaslPrep("user").value(), "user");       // no transformation
  EXPECT_EQ(SaslPrep("USER").value(), "USER");       // case preserved
  EXPECT_EQ(SaslPrep("\u00AA").value(), "a");        // output is NFKC, input in ISO 8859-1
  EXPECT_EQ(SaslPrep("\u2168").value(), "IX");       // output is NFKC
  EXPECT_EQ(SaslPrep("\u0007").status().code(), ErrorCode::kBadValue);  // prohibited
  EXPECT_EQ(SaslPrep("\u0627\u0031").status().code(), ErrorCode::kBadValue);  // bidi check
  EXPECT_EQ(SaslPrep("a\u00A0b").value(), "a b");  // a non-ASCII space is a space
}

TEST(ScramTest, Passwords) {
  EXPECT_TRUE(CheckPassword("pencil").ok());
  EXPECT_EQ(CheckPassword("").code(), ErrorCode::kBadValue);
  EXPECT_TRUE(CheckPassword("p\xC3\xA9ncil").ok());  // é: SASLprep keeps it
  EXPECT_EQ(CheckPassword("\xC2\xAD").code(), ErrorCode::kBadValue);  // nothing once mapped
  EXPECT_EQ(CheckPassword("p\xFFncil").code(), ErrorCode::kBadValue);  // not UTF-8
  ScramCredentials a = MakeScramCredentials("pencil"), b = MakeScramCredentials("pencil");
  EXPECT_EQ(a.salt.size(), 28u);
  EXPECT_NE(a.salt, b.salt);  // a fresh salt each time
  EXPECT_NE(a.stored_key, b.stored_key);
  EXPECT_EQ(a.iteration_count, 15000);
}

}  // namespace
}  // namespace rockdoc::wire
