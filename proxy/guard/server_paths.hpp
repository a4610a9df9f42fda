// Learns how the upstream turns path arguments into files: which server it
// is (from its initialize result), its allowed directories (by asking it
// with list_allowed_directories under ids of fsguard's own), and their
// changes when the client answers the server's roots/list. Which requests
// are pending is the ledger's business; this class reads their answers.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "proxy/guard/ledger.hpp"
#include "proxy/guard/outbox.hpp"
#include "tracker/allowed_directories.hpp"
#include "tracker/path.hpp"
#include "tracker/profiles.hpp"

namespace fsguard {

// One of the server's allowed directories that fsguard cannot see on its
// side: it does not exist there (or is not a directory), or path_map does
// not say where it is. Writes below it are refused.
struct UnseenDirectory {
  std::string server; // as the server spells it
  std::string local;  // fsguard's canonical spelling of it; "" when unmapped
  bool other = false; // fsguard's directory of that name is another one
};

class ServerPaths {
public:
  // `home` and `cwd` are the upstream's home directory and working directory;
  // `profile` is "auto" (detect the server) or a built-in profile's name.
  // fsguard's own listings are entered in `ledger`.
  ServerPaths(Disk& disk, Ledger& ledger, HomeDirectory home, std::string cwd,
              const std::string& profile);

  // The upstream's tools as the profile maps them (before detection: the
  // server-filesystem map, so nothing slips through while it is unknown).
  const ToolMap& tools() const { return m_profile.tools; }
  // How the server's get_file_info shows a file (none before detection, or
  // for a server fsguard has no profile for).
  FileInfoFormat file_info_format() const { return m_profile.file_info; }
  // The server's profile (before detection: server-filesystem's tools).
  const Profile& profile() const { return m_profile; }

  // Whether the config maps the tools itself (then an unknown server is
  // guarded by that map, not left unguarded).
  void set_custom_tools(bool custom) { m_custom_tools = custom; }

  // What resolving a path depends on right now.
  const PathContext& context() const { return m_context; }

  // Applies path_map: how the server's paths name fsguard's files.
  void set_path_map(PathMap map);
  // Whether fsguard sees the server's files itself (false with verify:
  // upstream): only then are its directories looked for on this side.
  void set_sees_files(bool sees) { m_sees_files = sees; }
  // Why the server may see other files than fsguard under the same paths
  // (it runs in a container, a sandbox, another mount namespace, over ssh);
  // "" when it runs in fsguard's own view of the files.
  void set_elsewhere(std::string why) { m_elsewhere = std::move(why); }
  const std::string& elsewhere() const { return m_elsewhere; }

  // The allowed directories of the last listing that fsguard cannot see.
  const std::vector<UnseenDirectory>& unseen() const { return m_unseen; }

  // Reads the upstream's answer to fsguard's get_file_info of its allowed
  // `directory`: when both sides keep creation times and they differ, the
  // directory fsguard sees under that name is another one.
  void on_probe_result(const nlohmann::json& response, const std::string& directory, Outbox& out);
  // fsguard's get_file_info of `directory` will never be answered.
  void probe_done()
  {
    m_probes_in_flight -= m_probes_in_flight > 0 ? 1 : 0;
    note_learned();
  }
  // True while a probe of an allowed directory awaits its answer.
  bool probing() const { return m_probes_in_flight > 0; }

  // The expectation for the client's tools/call of list_allowed_directories,
  // and the listing sequence to enter with it: its answer teaches fsguard.
  std::uint64_t client_listing_sequence() { return m_allowed.next_sequence(); }
  // Whether the server's roots/list requests concern fsguard.
  bool reads_roots() const { return m_context.rules == PathRules::server_filesystem; }

  // The params._meta fsguard's own requests carry (the 2026 era's
  // envelope, SessionEra::own_envelope()); null: none.
  void set_own_envelope(const nlohmann::json& envelope) { m_own_envelope = envelope; }

  // Reads the upstream's answer `response` to the client's initialize, or
  // to a server/discover (the 2026 era's), the client's or fsguard's own.
  void on_initialize_result(const nlohmann::json& response, Outbox& out);
  // True once an initialize result has named the server: until then the
  // tools map and the path rules in force are only a guess.
  bool knows_server() const { return m_knows_server; }
  // True while fsguard learns the allowed directories of a server that has
  // them: until the first listing is read (or could not be), and the
  // probes it sent are answered or given up on. Later changes of the
  // directories are in_doubt() instead.
  bool learning_directories() const
  {
    return m_context.rules == PathRules::server_filesystem && !m_directories_learned;
  }
  // Reads the upstream's answer `response` to a listing asked at `asked_at`,
  // fsguard's own when `own`.
  void on_listing_result(const nlohmann::json& response, std::uint64_t asked_at, bool own,
                         Outbox& out);
  // Reads the client's `response` to the server's roots/list.
  void on_roots_result(const nlohmann::json& response, Outbox& out);

  // True while the allowed directories are in doubt and a listing is not
  // already on its way: the relay should ask again after a while.
  bool wants_listing() const;
  // Adds a list_allowed_directories request of fsguard's own to `out`.
  void ask_for_listing(Outbox& out);

  // True while one of fsguard's listings awaits its answer.
  bool listing_in_flight() const { return m_listings_in_flight > 0; }
  // True while more than one allowed-directory set is possible, or none known.
  bool in_doubt() const
  {
    return m_context.rules == PathRules::server_filesystem && !m_allowed.settled();
  }
  // The listing of fsguard's own was answered or will never be.
  void listing_done() { m_listings_in_flight -= m_listings_in_flight > 0 ? 1 : 0; }
  // Stops waiting for listings that went unanswered too long (a late
  // answer is still read): the next one can be asked.
  void give_up_listings()
  {
    m_listings_in_flight = 0;
    m_probes_in_flight = 0;
    note_learned();
  }

private:
  void refresh_context();
  // Marks the directories learned once a listing was read and no probe
  // awaits its answer (see learning_directories()).
  void note_learned()
  {
    m_directories_learned = m_directories_learned || (m_listing_read && m_probes_in_flight == 0);
  }
  // Finds which of `directories` fsguard cannot see, and says so once
  // for each new finding.
  void look_for_unseen(const DirectorySet& directories, Outbox& out);
  // Asks the upstream about its allowed `directory` (see on_probe_result).
  void probe(const std::string& directory, Outbox& out);
  void warn_of_unseen(Outbox& out);

  Disk& m_disk;
  Ledger& m_ledger;
  PathContext m_context;
  Profile m_profile;
  bool m_detect = true; // choose the profile from the initialize result
  bool m_custom_tools = false;
  AllowedDirectories m_allowed;
  std::vector<UnseenDirectory> m_unseen;
  std::vector<std::string> m_unseen_told; // the server spellings last warned of
  std::set<std::string> m_probed;         // directories asked about (server spelling)
  std::set<std::string> m_other;          // of those, the ones that are not fsguard's
  int m_probes_in_flight = 0;
  bool m_sees_files = true;
  std::string m_elsewhere; // see set_elsewhere()
  std::uint64_t m_next_probe = 0;
  int m_listings_in_flight = 0;
  bool m_knows_server = false;        // an initialize result named the server
  bool m_listing_read = false;        // a listing was read, or fsguard's own could not be
  bool m_directories_learned = false; // see learning_directories()
  nlohmann::json m_own_envelope; // see set_own_envelope()
};

} // namespace fsguard
