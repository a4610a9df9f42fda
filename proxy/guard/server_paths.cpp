#include "proxy/guard/server_paths.hpp"

#include "proxy/jsonrpc/message.hpp"
#include "proxy/jsonrpc/protocol_era.hpp"
#include "tracker/file_info.hpp"
#include "tracker/joined.hpp"

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
  const auto& server = server_info(member(response, "result"));
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
  m_knows_server = true;
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
      m_listing_read = true; // asking again would tell no more
      note_learned();
    }
    return;
  }
  m_allowed.confirm(*directories, asked_at);
  refresh_context();
  look_for_unseen(*directories, out);
  m_listing_read = true; // with the probes look_for_unseen() sent in flight
  note_learned();
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
  if (current && m_context.map.empty() && m_sees_files) {
    // Roots are the client's paths; with a path_map the server sees other
    // names, and with verify: upstream fsguard cannot stat them, so only
    // its own listing tells.
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
  out.to_upstream.push_back(own_request_line(message, m_own_envelope));
}

void ServerPaths::refresh_context()
{
  m_context.allowed_sets = m_allowed.possible();
}

void ServerPaths::set_path_map(PathMap map)
{
  m_context.map = std::move(map);
}

void ServerPaths::look_for_unseen(const DirectorySet& directories, Outbox& out)
{
  m_unseen.clear();
  if (!m_sees_files) {
    return; // fsguard learns the files through the upstream
  }
  for (const auto& directory : directories) {
    const auto local = m_context.map.to_local(lexically_normal(directory));
    if (!local) {
      m_unseen.push_back(UnseenDirectory{directory, "", false});
      continue;
    }
    const auto found = m_disk.stat(*local);
    const auto canonical = canonical_path(m_disk, *local);
    const std::string spelled = canonical ? *canonical : *local;
    if (!found || !found->is_directory()) {
      m_unseen.push_back(UnseenDirectory{directory, spelled, false});
    } else if (m_other.contains(directory)) {
      m_unseen.push_back(UnseenDirectory{directory, spelled, true});
    } else if (!m_probed.contains(directory) && m_profile.tools.contains("get_file_info")) {
      probe(directory, out);
    }
  }
  warn_of_unseen(out);
}

void ServerPaths::warn_of_unseen(Outbox& out)
{
  std::vector<std::string> names;
  for (const auto& unseen : m_unseen) {
    names.push_back(unseen.server);
  }
  if (names.empty() || names == m_unseen_told) {
    m_unseen_told = std::move(names);
    return;
  }
  m_unseen_told = names;
  out.say(LogLevel::warn,
          "fsguard cannot see the upstream's allowed directories " + joined(names, ", ")
            + " (they do not exist on fsguard's side, are other directories of the same name, "
              "or path_map does not say where they are), so it refuses every write to them. The "
              "server runs where fsguard does not see its files (a container, or another "
              "mount namespace): set \"path_map\" in fsguard's config to map each to the "
              "directory fsguard sees it as, e.g. {\"/projects/app\": \"/home/me/app\"}; or, "
              "where fsguard cannot reach the files at all, set \"verify\": \"upstream\" to "
              "read them through the server. fsguard --check-setup shows what fsguard sees.");
}

void ServerPaths::probe(const std::string& directory, Outbox& out)
{
  PendingRequest request;
  request.from = Peer::fsguard;
  request.id = std::string(k_own_id_prefix) + "directory-probe/" + std::to_string(++m_next_probe);
  request.method = "tools/call";
  request.expect = Expectation::own_probe;
  request.probed = directory;
  nlohmann::json message = {
    {"jsonrpc", "2.0"},
    {"id", request.id},
    {"method", "tools/call"},
    {"params", {{"name", "get_file_info"}, {"arguments", {{"path", directory}}}}},
  };
  const std::string key = id_key(request.id);
  if (!m_ledger.open(key, std::move(request))) {
    return; // cannot happen: the number never repeats
  }
  m_probed.insert(directory);
  ++m_probes_in_flight;
  out.to_upstream.push_back(own_request_line(message, m_own_envelope));
}

void ServerPaths::on_probe_result(const nlohmann::json& response, const std::string& directory,
                                  Outbox& out)
{
  probe_done();
  const auto& content = member(member(response, "result"), "content");
  const auto& text = content.is_array() && !content.empty() ? member(content.front(), "text")
                                                            : nlohmann::json();
  const auto created = text.is_string() ? file_info_time(text.get_ref<const std::string&>(),
                                                        "created", m_profile.file_info)
                                         : std::nullopt;
  // In whole seconds, as the Disk gives birth times (towards zero: a time
  // before 1970 is taken for none below anyway).
  const auto server_born =
    created ? std::optional<std::int64_t>(created->ms / 1000) : std::nullopt;
  const auto local = m_context.map.to_local(lexically_normal(directory));
  const auto local_born = local ? m_disk.birth_seconds(*local) : std::nullopt;
  // A birth time of 0 is Node's for a filesystem that keeps none.
  if (!server_born || !local_born || *server_born <= 0 || *server_born == *local_born) {
    return;
  }
  m_other.insert(directory);
  const auto canonical = canonical_path(m_disk, *local);
  m_unseen.push_back(UnseenDirectory{directory, canonical ? *canonical : *local, true});
  warn_of_unseen(out);
}

} // namespace fsguard
