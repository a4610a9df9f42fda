#include "proxy/server_paths.hpp"

#include "proxy/message.hpp"

namespace fsguard {

ServerPaths::ServerPaths(Disk& disk, Ledger& ledger, HomeDirectory home, std::string cwd,
                         const std::string& profile)
  : m_disk(disk), m_ledger(ledger)
{
  m_context.home = std::move(home);
  m_context.cwd = std::move(cwd);
  if (auto named = profile_named(profile)) {
    m_profile = std::move(*named);
    m_detect = false;
    // Relative paths wait for the server's own directories, learned after
    // its initialize result.
    m_context.rules = m_profile.rules == PathRules::server_filesystem ? PathRules::absolute_only
                                                                      : m_profile.rules;
  } else {
    m_profile = Profile{"auto", server_filesystem_tools(), PathRules::absolute_only};
  }
}

void ServerPaths::on_initialize_result(const nlohmann::json& response, Outbox& out)
{
  const auto& server = member(member(response, "result"), "serverInfo");
  const auto& name = member(server, "name");
  const auto& version = member(server, "version");
  const std::string server_name = name.is_string() ? name.get<std::string>() : "";
  if (m_detect) {
    if (auto detected = profile_for_server(server_name, version.is_string()
                                                          ? version.get<std::string>()
                                                          : std::string())) {
      m_profile = std::move(*detected);
      out.say(LogLevel::info,
              "the upstream is " + server_name + ": using the " + m_profile.name + " profile");
    } else if (response.contains("result")) {
      m_profile = Profile{"none", {}, PathRules::absolute_only};
      if (m_custom_tools) {
        out.say(LogLevel::info,
                "the upstream is " + server_name + ": guarding the tools the config maps");
      } else {
        out.say(LogLevel::warn, "fsguard has no profile for the server \"" + server_name
                                  + "\", so nothing is guarded; map its tools with \"tools\" in "
                                    "the config");
      }
    }
  }
  m_context.rules = m_profile.rules;
  if (m_profile.rules == PathRules::server_filesystem) {
    ask_for_listing(out);
  }
}

void ServerPaths::on_listing_result(const nlohmann::json& response, std::uint64_t asked_at,
                                    bool own, Outbox& out)
{
  const auto& content = member(member(response, "result"), "content");
  const auto& text = content.is_array() && !content.empty() ? member(content.front(), "text")
                                                            : member(content, "text");
  const auto directories = text.is_string()
                             ? parse_allowed_directories(text.get_ref<const std::string&>())
                             : std::nullopt;
  if (!directories) {
    if (own) {
      out.say(LogLevel::warn,
              "could not read the upstream's allowed directories, so relative paths stay "
              "refused; the agent must use absolute paths");
    }
    return;
  }
  m_allowed.confirm(*directories, asked_at);
  refresh_context();
  out.say(LogLevel::debug,
          "the upstream's allowed directories: "
            + (directories->empty() ? std::string("(none)") : joined(*directories, ", "))
            + (m_allowed.settled() ? "" : " (a change is still possible)"));
}

void ServerPaths::on_roots_result(const nlohmann::json& response, Outbox& out)
{
  const auto& result = member(response, "result");
  if (!result.is_object()) {
    return; // an error reply: the server keeps its directories
  }
  const auto current = m_allowed.latest();
  if (current) {
    m_allowed.expect(predict_root_directories(result, *current, m_disk, m_context.home,
                                              m_context.cwd));
  } else {
    m_allowed.expect(std::nullopt);
  }
  refresh_context();
  ask_for_listing(out);
}

bool ServerPaths::wants_listing() const
{
  return m_context.rules == PathRules::server_filesystem && !m_allowed.settled()
         && !listing_in_flight();
}

void ServerPaths::ask_for_listing(Outbox& out)
{
  const std::uint64_t sequence = m_allowed.next_sequence();
  const std::string id = std::string(k_own_id_prefix) + "allowed-directories/"
                         + std::to_string(sequence);
  PendingRequest request;
  request.from = Peer::fsguard;
  request.id = id;
  request.method = "tools/call";
  request.expect = Expectation::own_listing;
  request.listing_sequence = sequence;
  const std::string key = id_key(request.id);
  if (!m_ledger.open(key, std::move(request))) {
    return; // cannot happen: the sequence never repeats
  }
  ++m_listings_in_flight;
  nlohmann::json message = {
    {"jsonrpc", "2.0"},
    {"id", id},
    {"method", "tools/call"},
    {"params", {{"name", "list_allowed_directories"}, {"arguments", nlohmann::json::object()}}},
  };
  out.to_upstream.push_back(message.dump() + "\n");
}

void ServerPaths::refresh_context()
{
  m_context.allowed_sets = m_allowed.possible();
}

} // namespace fsguard
