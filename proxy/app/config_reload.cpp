#include "proxy/app/config_reload.hpp"

#include "proxy/app/config_watch.hpp"
#include "proxy/stores/persistence.hpp"

namespace fsguard {

// Applies a changed config file: a valid one replaces the config in force
// (what was read stays known); a broken one is rejected and the last good
// config stays.
void reload_config(Session& session)
{
  auto loaded = load_effective_config(session.inputs);
  if (!loaded) {
    session.log.error("config not reloaded, the last good config stays in force: "
                      + loaded.error());
    audit(session, {{"event", "config_reload"}, {"file", *session.inputs.file},
                         {"result", "rejected"}, {"reason", loaded.error()}});
    return;
  }
  Config config = std::move(loaded).value();
  const Mode previous = session.config.mode;
  if (config.verify != session.config.verify) {
    session.log.warn("\"verify\" takes effect at start only: it stays \""
                     + std::string(to_string(session.config.verify)) + "\" until fsguard restarts");
    config.verify = session.config.verify;
  }
  if (config.verify == Verify::upstream && !config.path_map.empty()) {
    const std::string reason = "\"path_map\" and \"verify\": \"upstream\" (in force until "
                               "fsguard restarts) exclude each other";
    session.log.error("config not reloaded, the last good config stays in force: " + reason);
    audit(session, {{"event", "config_reload"}, {"file", *session.inputs.file},
                    {"result", "rejected"}, {"reason", reason}});
    return;
  }
  if (config.audit_log != session.audit.path()) {
    if (config.audit_log.empty()) {
      session.audit = AuditLog();
    } else if (auto reopened = AuditLog::open(config.audit_log)) {
      session.audit = std::move(reopened).value();
    } else {
      session.log.error(reopened.error() + "; keeping the previous audit log");
      config.audit_log = session.audit.path();
    }
  }
  session.config = config;
  session.guard.set_settings(guard_settings(config));
  reload_persistence(session);
  session.disk.set_max_hash_bytes(static_cast<std::int64_t>(config.max_line_bytes));
  session.guard.set_auditing(session.audit.enabled());
  session.log.set_level(config.log_level);
  session.log.info("reloaded the config from " + *session.inputs.file + " (mode "
                   + std::string(to_string(config.mode)) + ")");
  audit(session, {{"event", "config_reload"}, {"file", *session.inputs.file},
                       {"result", "applied"}});
  if (config.mode != previous) {
    session.log.warn("mode changed from " + std::string(to_string(previous)) + " to "
                     + std::string(to_string(config.mode)));
    audit(session, {{"event", "mode_change"}, {"from", to_string(previous)},
                         {"to", to_string(config.mode)}, {"source", config.sources["mode"]}});
  }
}

Task<void> watch_config(Session& session)
{
  if (!session.inputs.file) {
    co_return;
  }
  auto watch = ConfigWatch::start(session.context, *session.inputs.file);
  if (!watch) {
    session.log.warn(watch.error() + "; config changes need a restart");
    co_return;
  }
  while (!session.upstream.status() && co_await (*watch)->next_change()) {
    if (!session.upstream.status()) {
      reload_config(session);
    }
  }
}

} // namespace fsguard
