// rockdoc-serve: MongoDB's wire protocol over a rockdoc database directory
// (src/wire/server.h; README.md, "rockdoc serve"). The command line is
// split by the tools' flag parser (tools/flags.h), as every rockdoc
// program's, with mongod's flag names where mongod has the flag; what it
// decides goes to wire::Serve.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "rockdoc/c.h"
#include "tools/flags.h"
#include "wire/server.h"

namespace {

using rockdoc::tools::FlagArity;

const std::vector<rockdoc::tools::FlagSpec> kFlags = {
    {"dbpath", 0, FlagArity::kRequired, "DIR|the database directory (required; mongod's name)"},
    {"db", 0, FlagArity::kRequired, "DIR|the same (the shell's name)"},
    {"bind_ip", 0, FlagArity::kRequired,
     "ADDRESS|the address to listen on (default 127.0.0.1; ::1, localhost); one that is not "
     "loopback needs --auth (and should have --tlsMode requireTLS)"},
    {"bind", 0, FlagArity::kRequired, "ADDRESS|the same (rockdoc's older name)"},
    {"port", 0, FlagArity::kRequired, "N|the TCP port (default 27017; 0: any free port)"},
    {"unix", 0, FlagArity::kRequired, "PATH|also listen on a Unix socket at PATH (mode 0600)"},
    {"no-tcp", 0, FlagArity::kNone, "|listen on the Unix socket only"},
    {"auth", 0, FlagArity::kNone,
     "|require SCRAM users (SCRAM-SHA-256, SCRAM-SHA-1) (createUser: the first one from this machine while there "
     "is none)"},
    {"maxConns", 0, FlagArity::kRequired,
     "N|connections at once (default 1000; lowered to what the open-file limit holds)"},
    {"max-connections", 0, FlagArity::kRequired, "N|the same (rockdoc's older name)"},
    {"idle-timeout-secs", 0, FlagArity::kRequired,
     "N|close a connection idle this long (default 1800)"},
    {"journalCommitInterval", 0, FlagArity::kRequired,
     "MS|sync the write-ahead log every MS milliseconds (1..500, default 100; writes with "
     "j: true are synced before the reply)"},
    {"cacheSizeGB", 0, FlagArity::kRequired,
     "N|the block cache, in GB (0.25 and up; default half of (memory - 1 GB), at least 0.25, "
     "as mongod's)"},
    {"memoryLimitMB", 0, FlagArity::kRequired,
     "N|the memory this server sizes itself to, in MB (default: the machine's, or its "
     "cgroup's): the default cache is taken from it, and the messages being received at once "
     "hold at most a quarter of it"},
    {"replSet", 0, FlagArity::kRequired,
     "NAME|the name of the replica set of one member rockdoc-serve answers as (default rs0): "
     "hello reports it PRIMARY, so that drivers allow watch() and transactions; connect with "
     "?replicaSet=NAME or directConnection=true"},
    {"oplogSize", 0, FlagArity::kRequired,
     "MB|the change log's size (what watch() can resume from), in MB (default 256); the "
     "oldest commits go past it, as mongod's oplog's"},
    {"oplogMinRetentionHours", 0, FlagArity::kRequired,
     "H|keep every commit younger than H hours, whatever the size (default 0: none)"},
    {"tlsMode", 0, FlagArity::kRequired,
     "MODE|disabled (default), allowTLS or preferTLS (TLS and plain connections on the same "
     "port), requireTLS (plain connections are closed); TLS 1.2 and newer"},
    {"tlsCertificateKeyFile", 0, FlagArity::kRequired,
     "PEM|the server's certificate (and chain) and its private key, in one file (needed by "
     "every --tlsMode but disabled)"},
    {"tlsCertificateKeyFilePassword", 0, FlagArity::kRequired,
     "PASSWORD|the password of an encrypted key in --tlsCertificateKeyFile (getCmdLineOpts "
     "shows it as <password>)"},
    {"tlsCAFile", 0, FlagArity::kRequired,
     "PEM|the CA certificates client certificates must be signed by: clients must then "
     "present one"},
    {"tlsAllowConnectionsWithoutCertificates", 0, FlagArity::kNone,
     "|with --tlsCAFile: serve clients that present no certificate too (one presented is "
     "still checked)"},
    {"enableEncryption", 0, FlagArity::kNone,
     "|encrypt the database at rest (AES-256), with --encryptionKeyFile"},
    {"encryptionKeyFile", 0, FlagArity::kRequired,
     "FILE|the key, as mongod's: the base64 of 32 bytes (openssl rand -base64 32), readable "
     "by its owner alone"},
    {"help", 'h', FlagArity::kNone, "|this text"},
    {"version", 0, FlagArity::kNone, "|the version of rockdoc"},
};

std::string Usage() {
  return "Usage: rockdoc-serve --dbpath DIR [--bind_ip ADDRESS] [--port N] [--unix PATH]\n"
         "                     [--auth] [--tlsMode requireTLS --tlsCertificateKeyFile PEM]\n"
         "                     [--maxConns N] [--cacheSizeGB N] ...\n"
         "\n"
         "Serves the rockdoc database in DIR over MongoDB's wire protocol.\n"
         "\n" +
         rockdoc::tools::FlagHelp(kFlags) +
         "A flag's value follows it or an '=': --port 27018, --port=27018.\n";
}

bool ParseInt(const std::string& text, int64_t lo, int64_t hi, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || text.empty() || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseDouble(const std::string& text, double lo, double hi, double* out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || text.empty() || *end != '\0' || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

// The command line as getCmdLineOpts reports it: a password's value
// replaced by "<password>", as mongod's.
std::vector<std::string> RedactedArgv(int argc, char** argv) {
  static const std::string kPasswordFlag = "--tlsCertificateKeyFilePassword";
  std::vector<std::string> out(argv, argv + argc);
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i] == kPasswordFlag && i + 1 < out.size()) {
      out[++i] = "<password>";
    } else if (out[i].rfind(kPasswordFlag + "=", 0) == 0) {
      out[i] = kPasswordFlag + "=<password>";
    }
  }
  return out;
}

int Refuse(const std::string& message) {
  std::fprintf(stderr, "rockdoc-serve: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = rockdoc::tools::ParseFlags(argc, argv, kFlags);
  if (!parsed.ok()) {
    std::fprintf(stderr, "rockdoc-serve: %s\n%s", std::string(parsed.status().message()).c_str(),
                 Usage().c_str());
    return 2;
  }
  if (!parsed->positional.empty()) {
    return Refuse("unexpected argument '" + parsed->positional[0] +
                  "' (the database directory is --dbpath DIR)");
  }
  rockdoc::wire::ServeConfig config;
  rockdoc::wire::ServerOptions& options = config.server;
  for (const rockdoc::Element& flag : parsed->flags) {
    const std::string name(flag.key());
    const std::string value = flag.IsString() ? std::string(flag.String()) : std::string();
    int64_t n = 0;
    if (name == "help") {
      std::fputs(Usage().c_str(), stdout);
      return 0;
    } else if (name == "version") {
      std::printf("rockdoc-serve version: %s\n", rockdoc_version());
      return 0;
    } else if (name == "dbpath" || name == "db") {
      if (!config.db_path.empty() && config.db_path != value) {
        return Refuse("the database directory is given twice (" + config.db_path + " and " + value +
                      ")");
      }
      config.db_path = value;
    } else if (name == "bind_ip" || name == "bind") {
      options.bind_ip = value;
    } else if (name == "unix") {
      options.unix_socket = value;
    } else if (name == "replSet") {
      // mongod's rule for a set name: not empty, no '/' (it separates the
      // name from the seed list in a --replSet of old).
      if (value.empty() || value.find('/') != std::string::npos) {
        return Refuse("--replSet must be a non-empty name without '/', not '" + value + "'");
      }
      config.repl_set = value;
    } else if (name == "no-tcp") {
      config.tcp = false;
    } else if (name == "tlsMode") {
      auto mode = rockdoc::wire::ParseTlsMode(value);
      if (!mode.ok()) return Refuse(std::string(mode.status().message()));
      options.tls.mode = *mode;
    } else if (name == "tlsCertificateKeyFile") {
      options.tls.certificate_key_file = value;
    } else if (name == "tlsCertificateKeyFilePassword") {
      options.tls.certificate_key_file_password = value;
    } else if (name == "tlsCAFile") {
      options.tls.ca_file = value;
    } else if (name == "tlsAllowConnectionsWithoutCertificates") {
      options.tls.allow_connections_without_certificates = true;
    } else if (name == "enableEncryption") {
      config.enable_encryption = true;
    } else if (name == "encryptionKeyFile") {
      config.encryption_key_file = value;
    } else if (name == "auth") {
      options.auth = true;
    } else if (name == "port") {
      if (!ParseInt(value, 0, 65535, &n))
        return Refuse("--port must be 0..65535, not '" + value + "'");
      options.port = static_cast<int>(n);
    } else if (name == "cacheSizeGB") {
      // mongod's bounds for WiredTiger's cache.
      if (!ParseDouble(value, 0.25, 10000, &config.cache_gb)) {
        return Refuse("--cacheSizeGB must be 0.25..10000, not '" + value + "'");
      }
    } else if (name == "memoryLimitMB") {
      if (!ParseInt(value, 256, int64_t{1} << 40, &n)) {
        return Refuse("--memoryLimitMB must be 256 or more, not '" + value + "'");
      }
      config.memory_limit_mb = n;
    } else if (name == "oplogSize") {
      if (!ParseInt(value, 1, int64_t{1} << 30, &n)) {
        return Refuse("--oplogSize must be 1..1073741824 (MB), not '" + value + "'");
      }
      config.oplog_size_mb = n;
    } else if (name == "oplogMinRetentionHours") {
      if (!ParseDouble(value, 0, 1e9, &config.oplog_min_retention_hours)) {
        return Refuse("--oplogMinRetentionHours must be a number >= 0, not '" + value + "'");
      }
    } else if (name == "maxConns" || name == "max-connections") {
      if (!ParseInt(value, 1, 1000000, &n)) {
        return Refuse("--" + name + " must be 1..1000000, not '" + value + "'");
      }
      options.max_connections = static_cast<int>(n);
    } else if (name == "journalCommitInterval") {
      if (!ParseInt(value, 1, 500, &n)) {  // mongod's range
        return Refuse("--journalCommitInterval must be 1..500 (ms), not '" + value + "'");
      }
      options.journal_commit_interval_ms = n;
    } else if (name == "idle-timeout-secs") {
      if (!ParseInt(value, 1, 365LL * 24 * 3600, &n)) {
        return Refuse("--idle-timeout-secs must be a positive number, not '" + value + "'");
      }
      options.idle_timeout_ms = n * 1000;
    } else {
      // Every flag of kFlags is decoded above: one missing is a defect here.
      return Refuse("internal error: flag --" + name + " has no decoder");
    }
  }
  options.argv = RedactedArgv(argc, argv);
  return rockdoc::wire::Serve(std::move(config));
}
