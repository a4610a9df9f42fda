// Learns how the upstream turns path arguments into files: which server it
// is (from its initialize result), its allowed directories (by asking it
// with list_allowed_directories under ids of fsguard's own), and their
// changes when the client answers the server's roots/list.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "proxy/log.hpp"
#include "proxy/outbox.hpp"
#include "tracker/allowed_directories.hpp"
#include "tracker/path.hpp"
#include "tracker/profiles.hpp"

namespace fsguard {

// Ids of fsguard's own requests start with this; clients may not use it.
inline constexpr std::string_view k_own_id_prefix = "fsguard/";

class ServerPaths {
public:
  // `home` and `cwd` are the upstream's home directory and working directory;
  // `profile` is "auto" (detect the server) or a built-in profile's name.
  ServerPaths(Disk& disk, HomeDirectory home, std::string cwd, const std::string& profile,
              const Log& log);

  // The upstream's tools as the profile maps them (before detection: the
  // server-filesystem map, so nothing slips through while it is unknown).
  const ToolMap& tools() const { return m_profile.tools; }

  // Whether the config maps the tools itself (then an unknown server is
  // guarded by that map, not left unguarded).
  void set_custom_tools(bool custom) { m_custom_tools = custom; }

  // What resolving a path depends on right now.
  const PathContext& context() const { return m_context; }

  // The client sent a request `method` with id `key` (initialize matters).
  void on_client_request(std::string_view method, const std::string& key);
  // The client asked the server for its allowed directories itself, with
  // id `key`: the answer teaches fsguard too.
  void on_client_listing(const std::string& key);
  // The upstream sent a request `method` with id `key` (roots/list matters).
  void on_server_request(std::string_view method, const std::string& key);

  // Whether the upstream's response `key` / the client's response `key`
  // is one this class reads.
  bool awaits_upstream(const std::string& key) const;
  bool awaits_client(const std::string& key) const { return m_roots_requests.contains(key); }

  // Reads the upstream's `response` to `key`. Returns false if the response
  // answers fsguard's own request and must not reach the client.
  bool on_upstream_response(const std::string& key, const nlohmann::json& response, Outbox& out);
  // Reads the client's `response` to the server's roots/list `key`.
  void on_client_response(const std::string& key, const nlohmann::json& response, Outbox& out);

  // True while the allowed directories are in doubt and a listing is not
  // already on its way: the relay should ask again after a while.
  bool wants_listing() const;
  // Adds a list_allowed_directories request of fsguard's own to `out`.
  void ask_for_listing(Outbox& out);

  // True while one of fsguard's listings awaits its answer.
  bool listing_in_flight() const { return !m_listings.empty(); }
  // True while more than one allowed-directory set is possible, or none known.
  bool in_doubt() const
  {
    return m_context.rules == PathRules::server_filesystem && !m_allowed.settled();
  }

private:
  void refresh_context();

  Disk& m_disk;
  const Log& m_log;
  PathContext m_context;
  Profile m_profile;
  bool m_detect = true; // choose the profile from the initialize result
  bool m_custom_tools = false;
  AllowedDirectories m_allowed;
  std::unordered_set<std::string> m_initialize_requests;
  std::unordered_set<std::string> m_roots_requests;
  std::unordered_map<std::string, std::uint64_t> m_listings;        // fsguard's own
  std::unordered_map<std::string, std::uint64_t> m_client_listings; // the client's
};

} // namespace fsguard
