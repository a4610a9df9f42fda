#include "proxy/app/adopt.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "proxy/app/adopt_entries.hpp"
#include "proxy/app/adopt_places.hpp"
#include "proxy/app/adopt_toml.hpp"
#include "proxy/guard/text_diff.hpp"

namespace fsguard {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_backup_suffix = ".fsguard-backup";

// Whole configs: a diff of a client's config is shown in full.
constexpr DiffBounds k_whole_diff{100'000, 16 * 1024 * 1024};

// A file's bytes and permission bits, or why they cannot be had.
struct FileText {
  std::string text;
  mode_t mode = 0600;
};

struct ReadError {
  int number = 0;      // errno
  std::string reason;
};

Result<FileText, ReadError> read_file(const std::string& path)
{
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return ReadError{errno, std::strerror(errno)};
  }
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    const int number = errno;
    ::close(fd);
    return ReadError{number, number != 0 ? std::strerror(number) : "not a regular file"};
  }
  FileText file{{}, static_cast<mode_t>(status.st_mode & 07777)};
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      const int number = errno;
      ::close(fd);
      return ReadError{number, std::strerror(number)};
    }
    if (got == 0) {
      break;
    }
    file.text.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return file;
}

bool write_all(int fd, std::string_view text)
{
  while (!text.empty()) {
    const ssize_t wrote = ::write(fd, text.data(), text.size());
    if (wrote < 0 && errno == EINTR) {
      continue;
    }
    if (wrote <= 0) {
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(wrote));
  }
  return true;
}

// Writes `text` to the new file `path` (which must not exist) with `mode`.
std::string write_new_file(const std::string& path, std::string_view text, mode_t mode)
{
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return "cannot create " + path + ": " + std::strerror(errno);
  }
  const bool written = write_all(fd, text) && ::fchmod(fd, mode) == 0 && ::fsync(fd) == 0;
  const int number = errno;
  ::close(fd);
  if (!written) {
    ::unlink(path.c_str());
    return "cannot write " + path + ": " + std::strerror(number);
  }
  return "";
}

// Replaces `path` with `text` in one rename, so that a client reading it
// sees the old file or the new one, never a part; "" or why not.
std::string replace_file(const std::string& path, std::string_view text, mode_t mode)
{
  std::string temporary = path + ".fsguard-XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) {
    return "cannot create a file beside " + path + ": " + std::strerror(errno);
  }
  const bool written = write_all(fd, text) && ::fchmod(fd, mode) == 0 && ::fsync(fd) == 0;
  const int number = errno;
  ::close(fd);
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(written ? errno : number);
    ::unlink(temporary.c_str());
    return "cannot write " + path + ": " + reason;
  }
  return "";
}

Result<AdoptedConfig, std::string> adopt_config(const std::string& path, std::string_view text,
                                                const std::string& fsguard_path,
                                                Rewrite rewrite = Rewrite::adopt)
{
  return path.ends_with(".toml") ? adopt_toml_config(text, fsguard_path, rewrite)
                                 : adopt_json_config(text, fsguard_path, rewrite);
}

std::string joined(const std::vector<std::string>& items)
{
  std::string text;
  for (const auto& item : items) {
    text += (text.empty() ? "" : ", ") + item;
  }
  return text;
}

std::string environment_or(const char* name, const std::string& fallback)
{
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

// The configs to look at: the files given, or those of the clients.
std::vector<std::string> configs_to_look_at(const AdoptRequest& request)
{
  std::vector<std::string> paths;
  std::error_code error;
  if (!request.files.empty()) {
    for (const auto& file : request.files) {
      const auto absolute = fs::absolute(file, error);
      paths.push_back(error ? file : absolute.lexically_normal().string());
    }
    return paths;
  }
  const std::string home = environment_or("HOME", "");
  const AdoptPlaces places{home, fs::current_path(error).string(),
                           environment_or("XDG_CONFIG_HOME", home.empty() ? "" : home + "/.config"),
                           environment_or("CODEX_HOME", home.empty() ? "" : home + "/.codex")};
  return client_config_paths(places);
}

// The file a write to `path` should replace: its target if it is a link.
std::string real_path(const std::string& path)
{
  std::error_code error;
  const auto real = fs::canonical(path, error);
  return error ? path : real.string();
}

struct Tally {
  int found = 0;     // configs read
  int pending = 0;   // configs a dry run would change
  int changed = 0;   // configs rewritten or restored
  int refused = 0;   // configs refused, or that could not be read or written
};

void say(const std::string& line)
{
  std::fputs((line + "\n").c_str(), stdout);
}

// A config to rewrite: where it is, what it holds, what it will hold.
struct PlannedChange {
  std::string path;
  std::string real;
  FileText file;
  std::string text;
};

// Reads the config at `path`, reports what adopting it changes (a diff) or
// why it is refused, and returns the change, if there is one to make.
std::optional<PlannedChange> plan_one(const std::string& path, bool given,
                                      const std::string& fsguard_path, Tally& tally)
{
  const std::string real = real_path(path);
  auto file = read_file(real);
  if (!file) {
    if (!given && (file.error().number == ENOENT || file.error().number == ENOTDIR)) {
      return std::nullopt;
    }
    say(path + ": cannot read it: " + file.error().reason);
    ++tally.refused;
    return std::nullopt;
  }
  ++tally.found;
  const auto adopted = adopt_config(path, file->text, fsguard_path);
  if (!adopted) {
    say(path + ": REFUSED: " + adopted.error());
    ++tally.refused;
    return std::nullopt;
  }
  if (given && adopted->server_lists == 0) {
    say(path + ": REFUSED: it holds no list of MCP servers in a shape fsguard knows (JSON: "
               "mcpServers, servers, mcp.servers or projects.<dir>.mcpServers; TOML: "
               "[mcp_servers.NAME] tables)");
    ++tally.refused;
    return std::nullopt;
  }
  if (adopted->adopted.empty()) {
    say(path + (adopted->guarded.empty() ? std::string(": no filesystem server")
                                         : ": every filesystem server starts fsguard already ("
                                             + joined(adopted->guarded) + ")"));
    return std::nullopt;
  }
  // The rewrite must leave nothing to adopt: else fsguard would leave a
  // filesystem server unguarded beside the others.
  const auto again = adopt_config(path, adopted->text, fsguard_path);
  if (!again || !again->adopted.empty()) {
    say(path + ": REFUSED: fsguard could not rewrite it so that every filesystem server starts "
               "fsguard; put fsguard in front of them by hand (docs/clients.md)");
    ++tally.refused;
    return std::nullopt;
  }
  const auto count = adopted->adopted.size();
  say(path + ": " + std::to_string(count)
      + (count == 1 ? " filesystem server" : " filesystem servers")
      + " to start through fsguard: " + joined(adopted->adopted));
  std::fputs(diff_texts(file->text, adopted->text, path, path + " (with fsguard)", k_whole_diff)
               .text.c_str(),
             stdout);
  for (const auto& note : adopted->notes) {
    say(path + ": note: " + note);
  }
  const std::string backup = real + std::string(k_backup_suffix);
  if (::access(backup.c_str(), F_OK) == 0) {
    say(path + ": REFUSED: " + backup + " is there from an earlier fsguard adopt; run fsguard "
               "adopt --undo first, or remove it");
    ++tally.refused;
    return std::nullopt;
  }
  ++tally.pending;
  return PlannedChange{path, real, std::move(file).value(), adopted->text};
}

// Writes every change, each with its backup; if one cannot be written, the
// ones written before it are put back, so that all are made or none.
void apply_all(const std::vector<PlannedChange>& changes, Tally& tally)
{
  std::vector<const PlannedChange*> written;
  std::string failure;
  for (const auto& change : changes) {
    const std::string backup = change.real + std::string(k_backup_suffix);
    failure = write_new_file(backup, change.file.text, change.file.mode);
    if (failure.empty()) {
      failure = replace_file(change.real, change.text, change.file.mode);
      if (!failure.empty()) {
        ::unlink(backup.c_str());
      }
    }
    if (!failure.empty()) {
      say(change.path + ": not changed: " + failure);
      ++tally.refused;
      break;
    }
    written.push_back(&change);
  }
  for (const auto* change : written) {
    const std::string backup = change->real + std::string(k_backup_suffix);
    if (!failure.empty()) {
      if (replace_file(change->real, change->file.text, change->file.mode).empty()) {
        ::unlink(backup.c_str());
        say(change->path + ": put back as it was");
      } else {
        say(change->path + ": adopted, and could not be put back; the original is in " + backup);
      }
      continue;
    }
    say(change->path + ": adopted; the original is in " + backup);
    ++tally.changed;
  }
}

void undo_one(const std::string& path, bool given, const std::string& fsguard_path, Tally& tally)
{
  const std::string real = real_path(path);
  const std::string backup = real + std::string(k_backup_suffix);
  const auto original = read_file(backup);
  if (!original) {
    if (given || original.error().number != ENOENT) {
      say(path + ": nothing to restore: cannot read " + backup + ": " + original.error().reason);
      ++tally.refused;
    }
    return;
  }
  ++tally.found;
  const auto current = read_file(real);
  const auto adopted = adopt_config(path, original->text, fsguard_path);
  if (!current || current->text == original->text
      || (adopted && current->text == adopted->text)) {
    if (auto error = replace_file(real, original->text, original->mode); !error.empty()) {
      say(path + ": not restored: " + error);
      ++tally.refused;
      return;
    }
    ::unlink(backup.c_str());
    say(path + ": restored from " + backup);
    ++tally.changed;
    return;
  }
  // Changed since fsguard adopt wrote it (a client rewrites its config):
  // the backup would undo that change too, so the entries go back instead.
  const auto undone = adopt_config(path, current->text, fsguard_path, Rewrite::undo);
  if (!undone || undone->adopted.empty()) {
    say(path + ": REFUSED: it changed since fsguard adopt wrote it, and "
        + (undone ? "no entry in it starts " + fsguard_path + " --" : undone.error())
        + "; compare it with " + backup + " and put back by hand what you want");
    ++tally.refused;
    return;
  }
  std::fputs(diff_texts(current->text, undone->text, path, path + " (without fsguard)",
                        k_whole_diff)
               .text.c_str(),
             stdout);
  if (auto error = replace_file(real, undone->text, current->mode); !error.empty()) {
    say(path + ": not restored: " + error);
    ++tally.refused;
    return;
  }
  ::unlink(backup.c_str());
  say(path + ": it changed since fsguard adopt wrote it, so rather than " + backup
      + " (now removed), its entries were put back as they were: " + joined(undone->adopted));
  ++tally.changed;
}

// The absolute path of this fsguard, for the clients to start.
std::string running_fsguard()
{
  std::error_code error;
  const auto self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string("fsguard") : self.string();
}

} // namespace

int run_adopt(const AdoptRequest& request, Log& log)
{
  const std::string fsguard_path = running_fsguard();
  const bool given = !request.files.empty();
  Tally tally;
  std::vector<std::string> seen;
  std::vector<PlannedChange> changes;
  for (const auto& path : configs_to_look_at(request)) {
    const std::string real = real_path(path);
    if (std::find(seen.begin(), seen.end(), real) != seen.end()) {
      continue;
    }
    seen.push_back(real);
    if (request.action == AdoptAction::undo) {
      undo_one(path, given, fsguard_path, tally);
    } else if (auto change = plan_one(path, given, fsguard_path, tally)) {
      changes.push_back(std::move(*change));
    }
  }
  // A client reads several of these configs (Claude Code its user, project
  // and local servers): adopting some while another is refused could leave
  // it an unguarded filesystem server beside the guarded ones.
  const int refused_before = tally.refused;
  const bool apply = request.action == AdoptAction::apply && refused_before == 0;
  if (apply) {
    apply_all(changes, tally);
  }
  if (tally.found == 0 && tally.refused == 0) {
    say(request.action == AdoptAction::undo
          ? "fsguard adopt --undo found no config with a backup (FILE.fsguard-backup) to restore"
          : "fsguard adopt found no MCP client config here or in your home directory (see "
            "man fsguard for where it looks)");
  } else if (tally.pending > 0 && refused_before > 0) {
    say("Nothing was changed: fsguard adopt changes no config while another is refused, as a "
        "client that reads both would keep an unguarded filesystem server. Fix the refused "
        "configs, or name the ones to adopt: fsguard adopt --apply FILE...");
  } else if (tally.pending > 0 && !apply) {
    say("Nothing was changed. To make these changes, run: fsguard adopt --apply"
        + (given ? " " + joined(request.files) : std::string()));
    say("The original of each file is kept beside it as FILE.fsguard-backup; fsguard adopt "
        "--undo puts it back.");
  } else if (tally.changed > 0 && request.action == AdoptAction::apply) {
    say("Restart each client (or reconnect its MCP servers) to start fsguard. fsguard adopt "
        "--undo puts the originals back.");
  } else if (tally.changed == 0 && tally.refused == 0) {
    say("Nothing to change.");
  }
  if (tally.refused > 0) {
    log.error("adopt: " + std::to_string(tally.refused)
              + (tally.refused == 1 ? " config was" : " configs were")
              + " refused or could not be read or written (see above)");
    return 1;
  }
  return 0;
}

} // namespace fsguard
