// fsguard: parse the options, settle the config, run the session.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "proxy/app/adopt.hpp"
#include "proxy/app/check_setup.hpp"
#include "proxy/app/config.hpp"
#include "proxy/app/log.hpp"
#include "proxy/app/options.hpp"
#include "proxy/process/child_process.hpp"
#include "proxy/process/relay.hpp"
#include "proxy/app/terminal_hint.hpp"
#include "tracker/profiles.hpp"

namespace {

constexpr int k_usage_error = 2;

std::optional<std::string> environment(const char* name)
{
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    return std::nullopt;
  }
  return std::string(value);
}

} // namespace

int main(int argc, char** argv)
{
  using namespace fsguard;
  Log log;
  const auto options = parse_options(std::vector<std::string>(argv + 1, argv + argc));
  if (!options) {
    log.error(options.error() + " (see fsguard --help)");
    return k_usage_error;
  }
  if (options->help) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }
  if (options->version) {
    std::fputs(version_text().c_str(), stdout);
    return 0;
  }
  if (options->adopt) {
    return run_adopt(*options->adopt, log);
  }

  if (options->check_config) {
    const auto checked = load_config_file(*options->check_config, "--check-config");
    if (!checked) {
      log.error(checked.error());
      return 1;
    }
    std::fputs((*options->check_config + ": valid\n").c_str(), stdout);
    return 0;
  }

  if (options->print_profile) {
    const auto profile = profile_named(*options->print_profile);
    if (!profile) {
      log.error("--print-profile: there is no profile \"" + *options->print_profile
                + "\"; the profiles are " + profile_names());
      return k_usage_error;
    }
    std::fputs(describe_profile(*profile).c_str(), stdout);
    return 0;
  }

  const ConfigInputs inputs{options->config_path ? options->config_path : environment("FSGUARD_CONFIG"),
                            environment("FSGUARD_MODE"), options->mode, options->log_level,
                            options->config_path ? "--config" : "$FSGUARD_CONFIG"};
  auto config = load_effective_config(inputs);
  if (!config) {
    log.error(config.error());
    return k_usage_error;
  }
  log.set_level(config->log_level);
  if (options->print_config) {
    std::fputs(describe_config(*config).c_str(), stdout);
    return 0;
  }

  // A client that hangs up must not kill fsguard mid-write; writes report
  // EPIPE instead.
  ::signal(SIGPIPE, SIG_IGN);
  const auto command = options->upstream.empty() ? default_upstream_command() : options->upstream;
  if (options->check_setup) {
    return check_setup(*config, command, log);
  }
  if (::isatty(STDIN_FILENO) == 1) {
    write_to_stderr(terminal_hint(command, options->upstream.empty() ? DefaultUpstream::yes
                                                                      : DefaultUpstream::no));
  }
  return run_session(inputs, *config, command, log);
}
