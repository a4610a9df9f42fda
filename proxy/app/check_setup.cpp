#include "proxy/app/check_setup.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

#include "proxy/process/child_process.hpp"
#include "proxy/process/executor.hpp"
#include "proxy/jsonrpc/message.hpp"
#include "proxy/stores/real_disk.hpp"
#include "tracker/file_identity.hpp"
#include "tracker/file_state.hpp"
#include "tracker/path.hpp"
#include "tracker/profiles.hpp"
#include "tracker/server_filesystem.hpp"

namespace fsguard {

namespace {

namespace asio = boost::asio;

// The check's errors end it: they come back as exceptions, which check_setup
// reports.
constexpr asio::use_awaitable_t<Executor> k_or_throw;

constexpr auto k_time_limit = std::chrono::seconds(30);
constexpr std::size_t k_most_line_bytes = 64 * 1024 * 1024;

// One JSON-RPC conversation with the upstream, one request at a time.
class Conversation {
public:
  explicit Conversation(Upstream& upstream) : m_upstream(upstream) {}

  Task<void> notify(const std::string& method)
  {
    nlohmann::json message = {{"jsonrpc", "2.0"}, {"method", method}};
    co_await send(message);
  }

  // The upstream's answer to `method` with `params`.
  Task<nlohmann::json> ask(const std::string& method, nlohmann::json params)
  {
    const int id = ++m_next_id;
    nlohmann::json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
    co_await send(request);
    for (;;) {
      const auto length = co_await asio::async_read_until(
        m_upstream.output, asio::dynamic_buffer(m_buffer, k_most_line_bytes), '\n', k_or_throw);
      const auto message = nlohmann::json::parse(m_buffer.substr(0, length), nullptr, false);
      m_buffer.erase(0, length);
      if (message.is_object() && member(message, "id") == id && !message.contains("method")) {
        co_return message;
      }
    }
  }

  // The text of a tools/call answer, if it is a result with one.
  static std::optional<std::string> text_of(const nlohmann::json& answer)
  {
    const auto& result = member(answer, "result");
    const auto& content = member(result, "content");
    if (member(result, "isError") == true || !content.is_array() || content.empty()) {
      return std::nullopt;
    }
    const auto& text = member(content.front(), "text");
    return text.is_string() ? std::optional<std::string>(text.get<std::string>()) : std::nullopt;
  }

private:
  Task<void> send(const nlohmann::json& message)
  {
    const std::string line = message.dump() + "\n";
    co_await asio::async_write(m_upstream.input, asio::buffer(line), k_or_throw);
  }

  Upstream& m_upstream;
  std::string m_buffer;
  int m_next_id = 0;
};

// fsguard's own entries of `directory`: name -> whether it is a directory
// (a symlink is not one, as the server's listing shows it).
DirectoryEntries local_entries(const std::string& directory)
{
  DirectoryEntries entries;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    std::error_code type_error;
    entries[entry.path().filename().string()] = entry.is_directory(type_error)
                                                && !entry.is_symlink(type_error);
  }
  return entries;
}

constexpr std::size_t k_most_subdirectories = 64;

// How the server's listing of its `directory` differs from fsguard's of
// `local`, and, `depth` levels down, of its subdirectories (a mount inside
// the served directory shows there, unless `map` maps it too); nothing
// when they agree. `count` gets the number of entries compared.
Task<std::optional<std::string>> entries_difference(Conversation& upstream,
                                                    const std::string& directory,
                                                    const std::string& local, const PathMap& map,
                                                    int depth, std::size_t& count)
{
  nlohmann::json params = {{"name", "list_directory"}, {"arguments", {{"path", directory}}}};
  const auto answer = co_await upstream.ask("tools/call", params);
  const auto text = Conversation::text_of(answer);
  const auto server = text ? parse_directory_listing(*text) : std::nullopt;
  if (!server) {
    co_return "the server did not list " + directory;
  }
  count += server->size();
  if (auto difference = listing_difference(*server, local_entries(local))) {
    co_return "in " + directory + ": " + *difference;
  }
  std::size_t looked = 0;
  for (const auto& [name, is_directory] : *server) {
    if (depth == 0 || !is_directory || ++looked > k_most_subdirectories) {
      continue;
    }
    const std::string below = directory + "/" + name;
    const std::string local_below = map.to_local(below).value_or(local + "/" + name);
    if (auto difference =
          co_await entries_difference(upstream, below, local_below, map, depth - 1, count)) {
      co_return difference;
    }
  }
  co_return std::nullopt;
}

// One line of the report on the server's `directory`; sets `seen` false
// when fsguard cannot see it, and `proven` false when fsguard sees it but
// not all of it as the server does.
Task<std::string> check_directory(Conversation& upstream, const std::string& directory,
                                  const PathMap& map, bool checks_each_change, bool& seen,
                                  bool& proven)
{
  const auto local = map.to_local(lexically_normal(directory));
  if (!local) {
    seen = false;
    co_return "  " + directory + ": NOT VISIBLE: no path_map entry holds it";
  }
  const std::string where =
    *local == directory ? directory : directory + " -> " + *local + " (path_map)";
  std::error_code error;
  if (!std::filesystem::is_directory(*local, error)) {
    seen = false;
    co_return "  " + where + ": NOT VISIBLE: " + *local + " does not exist on fsguard's side"
           + (error ? " (" + error.message() + ")" : std::string());
  }
  // Another birth time proves another directory; the same one, kept in
  // whole seconds, proves little (a script makes two in one second).
  nlohmann::json info_params = {{"name", "get_file_info"}, {"arguments", {{"path", directory}}}};
  const auto answer = co_await upstream.ask("tools/call", info_params);
  const auto info = Conversation::text_of(answer);
  const auto server_born = info ? parse_created_seconds(*info) : std::nullopt;
  const auto local_born = RealDisk().birth_seconds(*local);
  if (server_born && local_born && *server_born > 0 && *server_born != *local_born) {
    seen = false;
    co_return "  " + where + ": NOT THE SAME DIRECTORY: the server's was created "
           + format_time(*server_born * 1'000'000'000LL) + ", fsguard's "
           + format_time(*local_born * 1'000'000'000LL);
  }
  // The same directory has the same entries, and so have its
  // subdirectories, unless something is mounted in one on one side only.
  std::size_t count = 0;
  const auto top = co_await entries_difference(upstream, directory, *local, map, 0, count);
  if (top) {
    seen = false;
    co_return "  " + where + ": NOT THE SAME DIRECTORY: " + *top;
  }
  if (auto below = co_await entries_difference(upstream, directory, *local, map, 1, count)) {
    proven = false;
    co_return "  " + where + ": visible, but NOT THE SAME BELOW IT: " + *below
           + " (a mount inside it on one side only, or a link that crosses mounts)";
  }
  if (count == 0) {
    co_return "  " + where + ": visible, empty on both sides (fsguard cannot compare entries"
           + (checks_each_change ? std::string("; it asks the server about each file before "
                                               "a change)")
                                 : std::string(")"));
  }
  co_return "  " + where + ": visible, the same directory (the same entries, in it and its "
         "subdirectories)";
}

// Whether the guard reads the server's get_file_info (see
// Guard::reads_file_info): its tools (`config`'s map, or the profile of the
// server that introduced itself as `server`) hold it, and fsguard reads
// the profile's format.
bool reads_file_info(const Config& config, const nlohmann::json& server)
{
  const auto& name = member(server, "name");
  const auto& version = member(server, "version");
  const std::optional<Profile> profile =
    config.profile != "auto"
      ? profile_named(config.profile)
      : profile_for_server(name.is_string() ? name.get_ref<const std::string&>() : "",
                           version.is_string() ? version.get_ref<const std::string&>() : "");
  return profile && fsguard::reads_file_info(*profile, config.tools ? *config.tools : profile->tools);
}

Task<int> run_check(Upstream& upstream, const Config& config,
                    const std::vector<std::string>& command)
{
  Conversation conversation(upstream);
  nlohmann::json hello = {{"protocolVersion", "2025-06-18"},
                          {"capabilities", nlohmann::json::object()},
                          {"clientInfo", {{"name", "fsguard-check-setup"}, {"version", "1"}}}};
  const auto initialized = co_await conversation.ask("initialize", hello);
  const auto& server = member(member(initialized, "result"), "serverInfo");
  if (!server.is_object()) {
    std::printf("the upstream did not initialize: %s\n", initialized.dump().c_str());
    co_return 1;
  }
  co_await conversation.notify("notifications/initialized");
  std::printf("upstream: %s %s\n", member(server, "name").dump().c_str(),
              member(server, "version").dump().c_str());
  nlohmann::json listing_params = {{"name", "list_allowed_directories"},
                                   {"arguments", nlohmann::json::object()}};
  const auto listing = co_await conversation.ask("tools/call", listing_params);
  const auto text = Conversation::text_of(listing);
  const auto directories = text ? parse_allowed_directories(*text) : std::nullopt;
  if (!directories) {
    std::printf("the upstream does not list allowed directories (list_allowed_directories), so "
                "fsguard cannot check them; writes are checked on the paths as the server spells "
                "them.\n");
    co_return 1;
  }
  if (config.verify == Verify::upstream) {
    std::printf("verify: upstream: fsguard reads each file through the server before a change, "
                "so it needs to see none of the upstream's allowed directories:\n");
    for (const auto& directory : *directories) {
      std::printf("  %s: read through the server\n", directory.c_str());
    }
    co_return 0;
  }
  // The server's processes run by now.
  const std::string why_each = why_check_each_change(
    config.identity_check, config.path_map, upstream_runs_elsewhere(upstream, command).value_or(""));
  const bool checks_each_change = !why_each.empty();
  std::printf("the upstream's allowed directories, as fsguard sees them:\n");
  int unseen = 0;
  int unproven = 0;
  for (const auto& directory : *directories) {
    bool seen = true;
    bool proven = true;
    std::printf("%s\n", (co_await check_directory(conversation, directory, config.path_map,
                                                   checks_each_change, seen, proven))
                          .c_str());
    unseen += seen ? 0 : 1;
    unproven += seen && !proven ? 1 : 0;
  }
  if (checks_each_change && !reads_file_info(config, server)) {
    std::printf("fsguard asks the server about each file before a change (as %s), but the "
                "server has no get_file_info whose answer fsguard reads, so it cannot prove any "
                "file is the server's and refuses every change. Set \"verify\": \"upstream\" to "
                "read the files through the server%s.\n",
                why_each.c_str(),
                config.tools ? ", or add get_file_info to the \"tools\" map" : "");
    co_return 1;
  }
  if (unseen == 0 && unproven > 0) {
    if (checks_each_change) {
      std::printf("fsguard sees the directories, but not every file below %d of %zu of them as "
                  "the server does: it cannot prove those files are the server's, so it asks the "
                  "server about each file before a change (as %s) and refuses those that differ. "
                  "Map such a mount with its own path_map entry, or set \"verify\": \"upstream\" "
                  "to read the files through the server.\n",
                  unproven, directories->size(), why_each.c_str());
    } else {
      std::printf("fsguard sees the directories, but not every file below %d of %zu of them as "
                  "the server does, and nothing in this setup tells it the server runs elsewhere: "
                  "it does not prove each file, so a write to one of those would not be guarded. "
                  "Set \"identity_check\": \"every_change\" (fsguard then asks the server about "
                  "each file before a change and refuses those that differ), map such a mount "
                  "with its own path_map entry, or set \"verify\": \"upstream\".\n",
                  unproven, directories->size());
    }
    co_return 1;
  }
  if (unseen == 0 && checks_each_change) {
    std::printf("fsguard sees every directory, and asks the server about each file before a "
                "change (as %s), refusing those that are not fsguard's: it guards writes to "
                "them.\n",
                why_each.c_str());
    co_return 0;
  }
  if (unseen == 0) {
    std::printf("fsguard sees every directory, and the server runs in fsguard's own view of the "
                "files (its command and processes share fsguard's mount namespace and root, and "
                "none is a container runtime, sandbox or remote shell fsguard knows): it guards "
                "writes to them. If a wrapper runs the server elsewhere, set \"identity_check\": "
                "\"every_change\".\n");
    co_return 0;
  }
  std::printf("fsguard cannot see %d of %zu directories and refuses every write below them. The "
              "server runs where fsguard does not see its files (a container, or another mount "
              "namespace): set \"path_map\" in fsguard's config to map each to the directory "
              "fsguard sees it as, e.g. {\"/projects/app\": \"/home/me/app\"}; or, where "
              "fsguard cannot reach the files at all, set \"verify\": \"upstream\" to read "
              "them through the server.\n",
              unseen, directories->size());
  co_return 1;
}

} // namespace

int check_setup(const Config& config, const std::vector<std::string>& command, Log& log)
{
  asio::io_context context;
  auto started = start_upstream(context, command);
  if (!started) {
    log.error(started.error());
    return 1;
  }
  Upstream upstream = std::move(started).value();
  // The upstream's stderr is drained so that it never blocks on it.
  asio::co_spawn(context, [&]() -> Task<void> {
    std::string sink;
    for (;;) {
      sink.clear();
      co_await asio::async_read_until(upstream.errors, asio::dynamic_buffer(sink), '\n', k_or_throw);
    }
  }, asio::detached);
  std::optional<int> status;
  asio::co_spawn(context, run_check(upstream, config, command), [&](std::exception_ptr failure, int result) {
    if (failure) {
      log.error("the upstream stopped answering before the check was done");
      status = 1;
    } else {
      status = result;
    }
    context.stop();
  });
  context.run_for(k_time_limit);
  if (!status) {
    log.error("the upstream did not answer within " + std::to_string(k_time_limit.count()) + " s");
    status = 1;
  }
  signal_upstream_group(upstream, SIGTERM);
  for (int waited = 0; waited < 50 && upstream_group_alive(upstream); ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (upstream_group_alive(upstream)) {
    signal_upstream_group(upstream, SIGKILL);
  }
  boost::system::error_code ignored;
  upstream.process.wait(ignored);
  return *status;
}

} // namespace fsguard
