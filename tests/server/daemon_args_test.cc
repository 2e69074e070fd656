// smbkitd's command line: every form, the usage errors (exit 2) and the
// configuration the quick form builds.
#include "server/daemon_args.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace smbkit::server {
namespace {

ParsedArgs parse(std::vector<std::string> words) {
  std::vector<const char*> argv{"smbkitd"};
  for (auto& w : words) argv.push_back(w.c_str());
  return parse_daemon_args(static_cast<int>(argv.size()), argv.data());
}

DaemonArgs parse_ok(std::vector<std::string> words) {
  ParsedArgs p = parse(std::move(words));
  EXPECT_TRUE(p.args.has_value()) << p.err;
  return p.args.value_or(DaemonArgs{});
}

void expect_usage(std::vector<std::string> words, std::string_view says) {
  ParsedArgs p = parse(words);
  EXPECT_FALSE(p.args.has_value());
  EXPECT_EQ(p.exit_code, kExitUsage);
  EXPECT_NE(p.err.find(says), std::string::npos) << p.err;
}

TEST(DaemonArgs, ServeFromAFile) {
  DaemonArgs a = parse_ok({"-s", "/etc/smbkitd.conf", "-F", "-d", "3", "--pidfile", "/run/s.pid"});
  EXPECT_EQ(a.command, DaemonCommand::serve);
  EXPECT_EQ(a.config_file, "/etc/smbkitd.conf");
  EXPECT_TRUE(a.foreground);
  EXPECT_EQ(a.debug_level, 3);
  EXPECT_EQ(a.pidfile, "/run/s.pid");
  EXPECT_FALSE(parse_ok({"-s", "f"}).foreground);
  EXPECT_EQ(parse_ok({"-s", "f"}).debug_level, std::nullopt);
}

TEST(DaemonArgs, QuickForm) {
  DaemonArgs a = parse_ok(
      {"--port", "4455", "--share", "a=/srv/a", "--share", "b=/srv/b,ro", "--private-dir", "/tmp/p", "--guest-ok"});
  EXPECT_EQ(a.port, 4455);
  EXPECT_EQ(a.shares, (std::vector<std::string>{"a=/srv/a", "b=/srv/b,ro"}));
  EXPECT_EQ(a.private_dir, "/tmp/p");
  EXPECT_TRUE(a.guest_ok);
  EXPECT_FALSE(a.foreground);
}

TEST(DaemonArgs, UserCommands) {
  DaemonArgs a = parse_ok({"-s", "f.conf", "user", "add", "alice"});
  EXPECT_EQ(a.command, DaemonCommand::user_add);
  EXPECT_EQ(a.user, "alice");
  a = parse_ok({"-s", "f.conf", "user", "del", "bob"});
  EXPECT_EQ(a.command, DaemonCommand::user_del);
  EXPECT_EQ(a.user, "bob");
  EXPECT_EQ(parse_ok({"--private-dir", "/p", "user", "list"}).command, DaemonCommand::user_list);
  // Options after the subcommand reach the program too.
  a = parse_ok({"user", "add", "carol", "-s", "f.conf"});
  EXPECT_EQ(a.config_file, "f.conf");
  EXPECT_EQ(a.user, "carol");
}

TEST(DaemonArgs, UsageErrorsExitTwo) {
  expect_usage({}, "give -s FILE, or --port N");
  expect_usage({"--port", "4455"}, "at least one --share");
  expect_usage({"--share", "a=/a"}, "--port N");
  expect_usage({"-s", "f", "--port", "1"}, "exclude each other");
  expect_usage({"user", "list"}, "needs -s FILE or --private-dir");
  expect_usage({"--port", "1", "--share", "a=/a", "user", "list"}, "not the quick form");
  expect_usage({"-s", "f", "user", "add"}, "NAME");
  expect_usage({"-s", "f", "user"}, "");
  expect_usage({"-s", "f", "-d", "4"}, "-d");
  expect_usage({"--port", "70000", "--share", "a=/a"}, "--port");
  expect_usage({"-s", "f", "--bogus"}, "--bogus");
}

TEST(DaemonArgs, HelpExitsZero) {
  ParsedArgs p = parse({"--help"});
  EXPECT_FALSE(p.args.has_value());
  EXPECT_EQ(p.exit_code, kExitOk);
  EXPECT_NE(p.out.find("--share"), std::string::npos);
}

TEST(DaemonConfig, QuickFormListensOnLoopbackOnly) {
  DaemonArgs a = parse_ok({"--port", "4455", "--share", "a=/srv/a", "--share", "b=/srv/b,ro"});
  auto c = config_from_args(a);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->global.smb_ports, std::vector<uint16_t>{4455});
  EXPECT_EQ(c->global.interfaces, std::vector<std::string>{"127.0.0.1"});
  EXPECT_TRUE(c->global.bind_interfaces_only);
  EXPECT_TRUE(c->global.private_dir.empty());  // no users file: guests only
  ASSERT_EQ(c->shares.size(), 2u);
  EXPECT_FALSE(c->shares[0].read_only);
  EXPECT_TRUE(c->shares[1].read_only);
  EXPECT_FALSE(c->shares[0].guest_ok);
  EXPECT_EQ(c->global.map_to_guest, MapToGuest::never);
}

TEST(DaemonConfig, QuickFormOptions) {
  DaemonArgs a = parse_ok({"--port", "0", "--share", "a=/srv/a", "--guest-ok", "--interfaces", "127.0.0.2,::1",
                           "--private-dir", "/tmp/priv", "--option", "server signing = mandatory"});
  auto c = config_from_args(a);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->global.smb_ports, std::vector<uint16_t>{0});
  EXPECT_EQ(c->global.interfaces, (std::vector<std::string>{"127.0.0.2", "::1"}));
  EXPECT_EQ(c->global.private_dir, "/tmp/priv");
  EXPECT_EQ(c->global.server_signing, Setting::required);
  ASSERT_EQ(c->shares.size(), 1u);
  EXPECT_TRUE(c->shares[0].guest_ok);
  EXPECT_EQ(c->global.map_to_guest, MapToGuest::bad_user);
}

TEST(DaemonConfig, ErrorsNameTheArgument) {
  auto c = config_from_args(parse_ok({"--port", "1", "--share", "a=rel"}));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().context.find("--share a=rel"), std::string::npos) << c.error().context;
  c = config_from_args(parse_ok({"--port", "1", "--share", "a=/a", "--interfaces", "eth0"}));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().context.find("eth0"), std::string::npos) << c.error().context;
  c = config_from_args(parse_ok({"--port", "1", "--share", "a=/a", "--option", "path=/x"}));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().context.find("share parameter"), std::string::npos) << c.error().context;
  c = config_from_args(parse_ok({"--port", "1", "--share", "a=/a", "--option", "nonsense"}));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().context.find("NAME=VALUE"), std::string::npos) << c.error().context;
  c = config_from_args(parse_ok({"-s", "/nonexistent/x.conf"}));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("/nonexistent/x.conf"), std::string::npos);
}

TEST(DaemonConfig, FileThenPrivateDirAndOptionsOverIt) {
  char tmpl[] = "/tmp/smbkitd-args-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string conf = std::string(tmpl) + "/smb.conf";
  std::ofstream(conf) << "[global]\nsmb ports = 4456\nprivate dir = /var/x\n[s]\npath = /s\n";
  auto c = config_from_args(parse_ok({"-s", conf, "--option", "smb ports=4457"}));
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->global.smb_ports, std::vector<uint16_t>{4457});
  EXPECT_EQ(c->global.private_dir, "/var/x");
  ASSERT_EQ(c->shares.size(), 1u);
  c = config_from_args(parse_ok({"-s", conf, "--private-dir", "/var/y", "user", "list"}));
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->global.private_dir, "/var/y");
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace smbkit::server
