// The guard's per-change proof of identity (see proxy/guard/identity_checks.hpp):
// where the server sees its files through path_map, a change waits for the
// server's get_file_info of each of its paths, and is refused when that
// shows another file than fsguard's own stat.
#include "proxy/guard/guard.hpp"

#include "proxy/guard/identity_checks.hpp"
#include "tracker/file_identity.hpp"

namespace fsguard {

std::vector<std::size_t> Guard::identity_files(const CallInFlight& call) const
{
  std::vector<std::size_t> files;
  const ToolRole role = call.what.role;
  const bool changes = role == ToolRole::write || role == ToolRole::edit || role == ToolRole::move;
  // With verify: upstream fsguard decides on the server's own text; with
  // no map it sees the server's paths as its own.
  if (!changes || view() || m_paths.context().map.empty() || !m_paths.reads_roots()
      || !tools().contains("get_file_info")) {
    return files;
  }
  for (std::size_t index = 0; index < call.files.size(); ++index) {
    if (call.files[index] && call.what.paths[index].raw) {
      files.push_back(index);
    }
  }
  return files;
}

bool Guard::awaits_identity(const CallInFlight& call, Outbox& out, Clock::time_point now)
{
  bool waits = false;
  for (const std::size_t index : identity_files(call)) {
    const std::string& file = *call.files[index];
    if (m_identity.known(file) != nullptr) {
      continue;
    }
    waits = true;
    if (m_identity.asking(file)) {
      continue;
    }
    PendingRequest request;
    request.from = Peer::fsguard;
    request.id =
      std::string(k_own_id_prefix) + "file-identity/" + std::to_string(++m_next_identity);
    request.method = "tools/call";
    request.expect = Expectation::own_identity;
    const std::string key = id_key(request.id);
    out.to_upstream.push_back(
      identity_request(request.id.get<std::string>(), *call.what.paths[index].raw,
                       m_era.own_envelope()));
    m_ledger.open(key, std::move(request)); // the number never repeats
    m_identity.asked(file, key, now);
  }
  return waits;
}

std::optional<Veto> Guard::identity_veto(const CallInFlight& call)
{
  std::optional<Veto> veto;
  for (const std::size_t index : identity_files(call)) {
    const std::string& file = *call.files[index];
    const ServerFileReport* report = m_identity.known(file);
    if (report == nullptr) {
      continue; // cannot happen: awaits_identity() waited for it
    }
    auto difference = identity_difference(*report, m_disk.stat(file));
    m_identity.forget(file); // it holds for this decision only
    if (!difference || veto) {
      continue;
    }
    const std::string& raw = *call.what.paths[index].raw;
    const auto slash = raw.find_last_of('/');
    veto.emplace();
    veto->code = VetoCode::not_visible;
    veto->path = file;
    veto->reason = slash == std::string::npos || slash == 0 ? raw : raw.substr(0, slash);
    veto->cause = "fsguard asked the server about " + raw + " before the change: "
                  + *difference
                  + "; fsguard's " + file + " is not the file the server would write (a mount "
                    "inside the served directory, a symlink that crosses mounts, or a path_map "
                    "to another directory)";
  }
  return veto;
}

void Guard::on_identity_answer(const std::string& key, ServerFileReport report, Outbox& out,
                               Clock::time_point now)
{
  if (m_identity.answered(key, std::move(report))) {
    release_held(out, now);
  }
}

} // namespace fsguard
