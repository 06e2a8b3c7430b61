// Issue 35, item 4: wire/ registers its commands with command/. One
// dispatcher and one table of known commands: listCommands lists what the
// dispatcher runs, a name it does not list is CommandNotFound, and the wire's
// commands (saslStart, createUser, getCmdLineOpts, ...) go through the same
// checks (admin only, Stable API, access control) as the command layer's,
// with the connection's state reaching them through the command's context.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "command/command.h"
#include "test_util.h"
#include "wire/message.h"
#include "wire/service.h"

namespace rockdoc::wire {
namespace {

using rockdoc::test::Json;
using ::testing::HasSubstr;

// listCommands' `commands` document.
Document Commands(const Document& reply) {
  EXPECT_EQ(reply.Get("ok").NumberAsDouble(), 1) << ToJson(reply);
  Element commands = reply.Get("commands");
  EXPECT_TRUE(commands.IsDocument()) << ToJson(reply);
  return commands.IsDocument() ? Document::AdoptValidated(std::string(commands.Document().bytes()))
                               : Document();
}

class WirelibTest : public rockdoc::test::ClientTest {
 protected:
  // The reply to `json` ($db added) sent as an OP_MSG on `conn`.
  Document Send(Service* service, std::string_view db, std::string_view json,
                ConnectionState* conn) {
    BsonBuilder b;
    for (Element e : Json(json)) b.AppendElement(e);
    b.AppendString("$db", db);
    Response r = service->Handle(BuildOpMsg(7, 0, 0, std::move(b).Build()), conn);
    auto msg = ParseOpMsg(r.reply);
    EXPECT_TRUE(msg.ok()) << msg.status().ToString();
    if (!msg.ok()) return Document();
    return Document::AdoptValidated(std::string(msg->body.bytes()));
  }
};

TEST_F(WirelibTest, ListCommandsAndTheDispatcherAgree) {
  const Document commands = Commands(client_->RunCommand("admin", Json(R"({"listCommands": 1})")));
  int listed = 0;
  for (Element c : commands) {
    ++listed;
    EXPECT_NE(internal::FindCommand(*client_, c.key()), nullptr) << c.key();
    ASSERT_TRUE(c.IsDocument());
    EXPECT_TRUE(c.Document().Get("adminOnly").IsBool()) << c.key();
    EXPECT_TRUE(c.Document().Get("requiresAuth").IsBool()) << c.key();
  }
  EXPECT_GT(listed, 30);
  EXPECT_TRUE(commands.Get("find").IsDocument());
  EXPECT_TRUE(commands.Get("listCommands").IsDocument());
  EXPECT_EQ(ToJson(commands.Get("listDatabases").Document()),
            R"({"adminOnly": true, "requiresAuth": true, "secondaryOk": true, )"
            R"("apiVersions": ["1"], "deprecatedApiVersions": []})");
  EXPECT_FALSE(commands.Get("hello").Document().Get("requiresAuth").Bool());
  // A client no server serves knows no wire command: the dispatcher's
  // unknown command, and listCommands does not list it.
  EXPECT_FALSE(commands.Get("saslStart").ok());
  EXPECT_EQ(internal::FindCommand(*client_, "saslStart"), nullptr);
  Document r = client_->RunCommand("admin", Json(R"({"saslStart": 1})"));
  EXPECT_EQ(r.Get("code").Int32(), 59) << ToJson(r);
  EXPECT_EQ(r.Get("errmsg").String(), "no such command: 'saslStart'");
}

TEST_F(WirelibTest, TheServiceRegistersItsCommandsWithTheCommandLayer) {
  Service service(client_.get());
  Service again(client_.get());  // the same table again: nothing changes
  const Document commands = Commands(client_->RunCommand("admin", Json(R"({"listCommands": 1})")));
  for (std::string_view name :
       {"saslStart", "saslContinue", "createUser", "dropUser", "usersInfo", "getCmdLineOpts"}) {
    EXPECT_TRUE(commands.Get(name).IsDocument()) << name;
    EXPECT_NE(internal::FindCommand(*client_, name), nullptr) << name;
  }
  EXPECT_EQ(ToJson(commands.Get("saslStart").Document()),
            R"({"adminOnly": false, "requiresAuth": false, "secondaryOk": true, )"
            R"("apiVersions": ["1"], "deprecatedApiVersions": []})");
  EXPECT_TRUE(commands.Get("getCmdLineOpts").Document().Get("adminOnly").Bool());
  EXPECT_TRUE(commands.Get("dropUser").Document().Get("requiresAuth").Bool());
  // In-process, a wire command has no connection to work with.
  Document r = client_->RunCommand("admin", Json(R"({"getCmdLineOpts": 1})"));
  EXPECT_EQ(r.Get("code").Int32(), 20) << ToJson(r);
  EXPECT_EQ(r.Get("errmsg").String(), "getCmdLineOpts runs only on a connection to rockdoc-serve");
  // A layer cannot take a name the client knows.
  static constexpr internal::CommandDefinition kClash[] = {
      {"find", [](internal::CommandContext&, DocumentView, BsonBuilder*) { return Status::OK(); }}};
  Status clash = internal::RegisterCommands(*client_, kClash);
  EXPECT_EQ(clash.code(), ErrorCode::kBadValue) << clash;
  EXPECT_EQ(clash.message(), "cannot register the command 'find': it exists");
}

TEST_F(WirelibTest, WireCommandsGoThroughTheDispatchersChecks) {
  ServiceOptions options;
  options.auth = true;
  options.argv = {"rockdoc-serve", "--auth"};
  Service service(client_.get(), options);
  ConnectionState conn;
  conn.id = 42;
  // Unauthenticated: listCommands and hello run, dropUser does not.
  EXPECT_EQ(Send(&service, "admin", R"({"listCommands": 1})", &conn).Get("ok").NumberAsDouble(),
            1);
  Document r = Send(&service, "admin", R"({"dropUser": "u"})", &conn);
  EXPECT_EQ(r.Get("code").Int32(), 13) << ToJson(r);
  EXPECT_EQ(r.Get("errmsg").String(), "Command dropUser requires authentication");
  // The Stable API check of the dispatcher, for a wire command too.
  r = Send(&service, "admin",
           R"({"createUser": "u", "pwd": "p", "roles": ["root"], "apiVersion": "1",
               "apiStrict": true})",
           &conn);
  EXPECT_EQ(r.Get("code").Int32(), 323) << ToJson(r);
  // The localhost exception, then the user's hello: connectionId and
  // saslSupportedMechs come from the connection.
  r = Send(&service, "admin", R"({"createUser": "u", "pwd": "p", "roles": ["root"]})", &conn);
  EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
  r = Send(&service, "admin", R"({"hello": 1, "saslSupportedMechs": "admin.u"})", &conn);
  EXPECT_EQ(r.Get("connectionId").Int32(), 42) << ToJson(r);
  EXPECT_THAT(ToJson(r), HasSubstr(R"("saslSupportedMechs": ["SCRAM-SHA-1", "SCRAM-SHA-256"], "ok": 1.0})"));
  // Logged in (as the SCRAM conversation would leave it): getCmdLineOpts
  // gets the dispatcher's admin-only error elsewhere, its argv in admin.
  conn.auth.user = "admin.u";
  conn.auth.user_id = std::string(
      client_->GetDatabase("admin")
          .GetCollection("rockdoc.users")
          .FindOne(Json(R"({"_id": "admin.u"})"))
          .value()
          .value()
          .Get("userId")
          .AsBinary()
          ->data);
  r = Send(&service, "test", R"({"getCmdLineOpts": 1})", &conn);
  EXPECT_EQ(r.Get("code").Int32(), 13) << ToJson(r);
  EXPECT_EQ(r.Get("errmsg").String(), "getCmdLineOpts may only be run against the admin database.");
  r = Send(&service, "admin", R"({"getCmdLineOpts": 1})", &conn);
  EXPECT_EQ(ToJson(r), R"({"argv": ["rockdoc-serve", "--auth"], "parsed": {}, "ok": 1.0})");
  r = Send(&service, "admin", R"({"dropUser": "u"})", &conn);
  EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
  // In-process, hello has no connection: connectionId 1, no mechanisms.
  r = client_->RunCommand("admin", Json(R"({"hello": 1, "saslSupportedMechs": "admin.u"})"));
  EXPECT_EQ(r.Get("connectionId").Int32(), 1);
  EXPECT_FALSE(r.Get("saslSupportedMechs").ok());
}

}  // namespace
}  // namespace rockdoc::wire
