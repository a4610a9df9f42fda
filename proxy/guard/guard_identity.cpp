// The guard's per-change proof of identity (see proxy/guard/identity_checks.hpp):
// where the server may see other files under its paths (path_map; an
// upstream in a container, a sandbox, another mount namespace, over ssh;
// or identity_check "every_change"), a change waits for the server's
// get_file_info of each of its paths, and is refused when that shows
// another file than fsguard's own stat.
#include "proxy/guard/guard.hpp"

#include <cerrno>

#include <algorithm>

#include "proxy/guard/identity_checks.hpp"
#include "tracker/file_identity.hpp"

namespace fsguard {

namespace {

// fsguard's stat of `file`, if it has one.
std::optional<FileStat> local_stat(Disk& disk, const std::string& file)
{
  auto found = disk.stat(file);
  return found ? std::optional<FileStat>(*found) : std::nullopt;
}

// What IdentityChecks keeps a report under: the server's path `raw` of
// fsguard's `file`. Two server paths that name one file on fsguard's side
// (a symlink that crosses mounts on the server's side only) are asked
// about each.
std::string subject(const std::string& file, const std::string& raw)
{
  return raw + '\0' + file;
}

// The server's directory above its path `raw`, as a not_visible veto names it.
std::string directory_of(const std::string& raw)
{
  const auto slash = raw.find_last_of('/');
  return slash == std::string::npos || slash == 0 ? raw : raw.substr(0, slash);
}

// What the server's `report` of its path `raw` and fsguard's `local` stat
// of `file` show: nothing when they show one file; else the refusal.
std::optional<Veto> identity_veto(const std::string& file, const std::string& raw,
                                  const ServerFileReport& report,
                                  const Result<FileStat, DiskError>& local)
{
  Veto veto;
  veto.path = file;
  if (!local && local.error().error_number != ENOENT) {
    veto.code = VetoCode::cannot_inspect;
    veto.reason = "fsguard cannot stat it to compare it with the server's report of " + raw
                  + ": " + local.error().detail;
    return veto;
  }
  const auto difference = identity_difference(report, local);
  if (!difference) {
    return std::nullopt;
  }
  if (report.outcome == ServerFileReport::Outcome::unknown) {
    // No answer, or the server's error: nothing shows another file, and
    // a retry may well go through (as verify: upstream's own reads).
    veto.code = VetoCode::cannot_inspect;
    veto.reason = "fsguard asked the server about " + raw + " before the change, and "
                  + report.reason + ", so fsguard could not prove it is the file the server "
                  "would write";
    veto.remedy = "Retry in a moment; if it happens again, tell the user the server does not "
                  "answer fsguard's get_file_info (fsguard --check-setup shows the setup).";
    return veto;
  }
  veto.code = VetoCode::not_visible;
  veto.reason = directory_of(raw);
  veto.cause = "fsguard asked the server about " + raw + " before the change: " + *difference
               + "; fsguard's " + file
               + " is not the file the server would write (a mount inside the served "
                 "directory, a symlink that crosses mounts, or a path_map to another directory)";
  return veto;
}

} // namespace

std::string Guard::why_check_each_change() const
{
  if (view()) {
    return ""; // verify: upstream decides on the server's own text
  }
  return fsguard::why_check_each_change(m_settings.identity_check, m_paths.context().map,
                                        m_paths.elsewhere());
}

bool Guard::reads_file_info() const
{
  return fsguard::reads_file_info(m_paths.profile(), tools());
}

std::vector<std::size_t> Guard::identity_files(const CallInFlight& call) const
{
  std::vector<std::size_t> files;
  const ToolRole role = call.what.role;
  const bool changes = role == ToolRole::write || role == ToolRole::edit || role == ToolRole::move;
  if (!changes || why_check_each_change().empty()) {
    return files;
  }
  for (std::size_t index = 0; index < call.files.size(); ++index) {
    // Below a directory fsguard cannot see, the change is refused anyway,
    // naming the directory.
    if (!call.files[index] || !call.what.paths[index].raw || unseen_veto(*call.files[index])) {
      continue;
    }
    // Once per path and file: a move onto itself names both twice.
    const auto same = [&](std::size_t other) {
      return call.files[other] == call.files[index]
             && call.what.paths[other].raw == call.what.paths[index].raw;
    };
    if (std::none_of(files.begin(), files.end(), same)) {
      files.push_back(index);
    }
  }
  return files;
}

void Guard::ask_identity(const std::string& file, const std::string& raw, Outbox& out,
                         Clock::time_point now)
{
  PendingRequest request;
  request.from = Peer::fsguard;
  request.id = m_identity.next_id(std::string(k_own_id_prefix) + "file-identity/");
  request.method = "tools/call";
  request.expect = Expectation::own_identity;
  const std::string key = id_key(request.id);
  out.to_upstream.push_back(
    identity_request(request.id.get<std::string>(), raw, m_era.own_envelope()));
  m_ledger.open(key, std::move(request)); // the number never repeats
  m_identity.asked(subject(file, raw), key, now, m_records.moment(), local_stat(m_disk, file));
}

Guard::IdentityVerdict Guard::prove_identity(const CallInFlight& call, Outbox& out,
                                             Clock::time_point now)
{
  IdentityVerdict verdict;
  const std::vector<std::size_t> files = identity_files(call);
  if (files.empty()) {
    return verdict;
  }
  if (!reads_file_info()) {
    const std::string& raw = *call.what.paths[files.front()].raw;
    verdict.veto.emplace();
    verdict.veto->code = VetoCode::cannot_inspect;
    verdict.veto->path = *call.files[files.front()];
    verdict.veto->reason = "fsguard must ask the server about " + raw + " before a change, as "
                           + why_check_each_change() + ", but the server has no get_file_info "
                           "whose answer fsguard reads, so fsguard cannot prove its file is the "
                           "server's";
    verdict.veto->remedy = "This is a setup problem that retrying will not fix: tell the user to "
                           "set \"verify\": \"upstream\" in fsguard's config (without "
                           "path_map), so that fsguard reads each file through the server.";
    return verdict;
  }
  // Every file asked about first: the questions go out together.
  for (const std::size_t index : files) {
    const std::string& file = *call.files[index];
    const std::string& raw = *call.what.paths[index].raw;
    if (m_identity.known(subject(file, raw), call.sent_at) == nullptr) {
      verdict.waits = true;
      if (!m_identity.asking(subject(file, raw))) {
        ask_identity(file, raw, out, now);
      }
    }
  }
  if (verdict.waits) {
    return verdict;
  }
  // Each file judged; the reports are kept until the call is decided, so a
  // file asked about again does not send the others' questions again.
  std::vector<std::optional<Veto>> vetoes;
  for (const std::size_t index : files) {
    const std::string& file = *call.files[index];
    const std::string& raw = *call.what.paths[index].raw;
    const IdentityReport& report = *m_identity.known(subject(file, raw), call.sent_at);
    const auto local = m_disk.stat(file);
    auto veto = identity_veto(file, raw, report.server, local);
    const std::optional<FileStat> local_now = local ? std::optional<FileStat>(*local) : std::nullopt;
    const bool answered = report.server.outcome != ServerFileReport::Outcome::unknown;
    if (veto && answered && local_now != report.local_when_asked) {
      // fsguard's file changed between its question and its stat: the two
      // sides were looked at at different times, which proves nothing.
      if (m_identity.ask_again(subject(file, raw))) {
        ask_identity(file, raw, out, now);
        verdict.waits = true;
        continue;
      }
      veto.emplace();
      veto->code = VetoCode::cannot_inspect;
      veto->path = file;
      veto->reason = "it changed each of the " + std::to_string(IdentityChecks::k_most_asks)
                     + " times fsguard compared it with the server's report of " + raw
                     + ", so fsguard could not prove it is the file the server would write";
      veto->remedy = "Wait until it holds still (a build or a formatter may be writing it), "
                     "read it again, then retry.";
    }
    vetoes.push_back(std::move(veto));
  }
  if (verdict.waits) {
    return verdict; // decided when every file is proven or refused
  }
  for (const std::size_t index : files) {
    const std::string key = subject(*call.files[index], *call.what.paths[index].raw);
    m_identity.forget(key); // they held for this decision only
    m_identity.forget_asks(key);
  }
  for (auto& veto : vetoes) {
    if (veto) {
      verdict.veto = std::move(veto);
      break;
    }
  }
  return verdict;
}

void Guard::on_identity_answer(const std::string& key, ServerFileReport report, Outbox& out,
                               Clock::time_point now)
{
  if (m_identity.answered(key, std::move(report), now)) {
    release_held(out, now);
  }
}

} // namespace fsguard
