#include "proxy/guard/override_prompt.hpp"

#include <algorithm>

#include "proxy/jsonrpc/message.hpp"
#include "proxy/guard/quoted_text.hpp"
#include "tracker/unicode.hpp"

namespace fsguard {

namespace {

// The labels of the diff a `changed` veto shows the agent (stale_change),
// spoken to the agent; the person is shown the diff under labels of its own.
constexpr std::string_view k_agent_seen_label = "\t(as you last saw it)";
constexpr std::string_view k_agent_now_label = "\t(on disk now)";

// What happened, for the person: the agent's words are not theirs, and
// everything of the agent's is quoted.
std::string what_happened(const std::string& tool, const Veto& veto)
{
  const std::string start =
    "The agent's " + in_quotes(tool) + " of " + in_quotes(veto.path) + " was stopped by fsguard: ";
  switch (veto.code) {
  case VetoCode::not_read:
    return start + "the file exists and the agent has not read it in this session, so the "
                   "write would replace content the agent has not seen.";
  case VetoCode::partial_read:
    return start + "the agent has read only part of the file, so the write would replace "
                   "lines it has not seen.";
  case VetoCode::changed:
    if (veto.cause.empty() || veto.cause == "outside fsguard") {
      return start + "the file was modified outside fsguard after the agent last read it, so "
                     "the write would replace that change.";
    }
    return start + "the file was modified after the agent last read it, so the write would "
                   "replace that change. Who changed it, as fsguard told the agent: "
           + in_quotes(veto.cause) + ".";
  case VetoCode::expired:
    return start + "the agent read the file longer ago than this session allows, so what it "
                   "saw may no longer be current.";
  default:
    return start + "fsguard cannot vouch that the write is safe.";
  }
}

// The veto's diff for the person: headed with the quoted path and labels
// that speak of the agent, its lines with their control characters shown.
std::string diff_for_person(const Veto& veto)
{
  const std::string agent_head = "--- " + veto.path + std::string(k_agent_seen_label) + "\n+++ "
                                 + veto.path + std::string(k_agent_now_label) + "\n";
  if (!std::string_view(veto.diff).starts_with(agent_head)) {
    return with_controls_shown(veto.diff);
  }
  const std::string path = in_quotes(veto.path);
  return "--- " + path + "\t(as the agent last saw it)\n+++ " + path + "\t(on disk now)\n"
         + with_controls_shown(std::string_view(veto.diff).substr(agent_head.size()));
}

// What the question shows of the file's content: its size, and its first
// lines, each after "| ", so none can pose as fsguard's words or end the
// block.
std::string shown_preview(const FilePreview& preview)
{
  std::string text = "The file now holds " + std::to_string(preview.size) + " bytes";
  switch (preview.lines) {
  case FilePreview::Lines::not_read:
    return text + ", too many for fsguard to show its first lines here.";
  case FilePreview::Lines::not_text:
    return text + ", which are not UTF-8 text, so its lines are not shown.";
  case FilePreview::Lines::shown:
    break;
  }
  if (preview.size == 0) {
    return text + ".";
  }
  text += preview.whole ? "; all of them:\n" : "; the first of them:\n";
  std::string block;
  const std::string lines = with_controls_shown(preview.first_lines);
  for (std::size_t at = 0; at < lines.size();) {
    const auto end = std::min(lines.find('\n', at), lines.size());
    block += "| " + lines.substr(at, end - at) + "\n";
    at = end + 1;
  }
  text += "```\n" + block + "```";
  if (!preview.whole) {
    text += "\n(the rest is not shown)";
  }
  return text;
}

std::string asked_person()
{
  return "fsguard asked the user through the client whether to allow this write; ";
}

std::string asked_client()
{
  return "fsguard asked the client to ask the user whether to allow this write; ";
}

// The answer's name in the protocol, as the client sent it.
std::string_view action_of(OverrideAnswer answer)
{
  switch (answer) {
  case OverrideAnswer::allow:
  case OverrideAnswer::not_confirmed:
    return "accept";
  case OverrideAnswer::decline:
    return "decline";
  case OverrideAnswer::cancel:
    return "cancel";
  default:
    return "";
  }
}

// At most this many bytes of a client's error message are passed on.
constexpr std::size_t k_error_message_bytes = 200;

// `text` cut to `bytes` at a character boundary, "..." marking the cut.
std::string cut_to(std::string_view text, std::size_t bytes)
{
  if (text.size() <= bytes) {
    return std::string(text);
  }
  std::size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  return std::string(text.substr(0, end)) + "...";
}

} // namespace

bool may_override(VetoCode code)
{
  return code == VetoCode::not_read || code == VetoCode::partial_read
         || code == VetoCode::changed || code == VetoCode::expired;
}

FilePreview preview_of(std::string_view bytes)
{
  FilePreview preview;
  preview.size = static_cast<std::int64_t>(bytes.size());
  preview.lines = FilePreview::Lines::shown;
  std::size_t end = 0;
  std::size_t lines = 0;
  while (end < bytes.size() && lines < k_preview_lines) {
    const Utf8Sequence sequence = utf8_sequence(bytes, end);
    if (!sequence.valid || bytes[end] == '\0') {
      preview.lines = FilePreview::Lines::not_text;
      return preview;
    }
    if (end + sequence.length > k_preview_bytes) {
      break;
    }
    lines += bytes[end] == '\n' ? 1 : 0;
    end += sequence.length;
  }
  preview.first_lines = std::string(bytes.substr(0, end));
  preview.whole = end == bytes.size();
  return preview;
}

nlohmann::ordered_json override_question(const std::string& tool, const Veto& veto,
                                         const FilePreview* preview)
{
  std::string message = what_happened(tool, veto);
  if (!veto.diff.empty()) {
    message += "\n\nWhat changed, from the version the agent last saw to the file now"
               + std::string(veto.diff_complete ? "" : " (cut)") + ":\n"
               + fenced_diff(diff_for_person(veto));
    message.pop_back(); // the block's last line break: one blank line follows, as for others
  } else if (preview != nullptr) {
    message += "\n\n" + shown_preview(*preview);
  }
  message += "\n\nAllow this one write? Only this call goes ahead; later ones are checked as "
             "before.";
  return {{"message", message},
          {"requestedSchema",
           {{"type", "object"},
            {"properties",
             {{"allow",
               {{"type", "boolean"},
                {"title", "Allow this write"},
                {"description",
                 "Let the agent's " + in_quotes(tool) + " of " + in_quotes(veto.path)
                   + " go ahead once"},
                {"default", false}}}}},
            {"required", {"allow"}}}}};
}

std::string override_request(const std::string& id, const std::string& tool, const Veto& veto,
                             const FilePreview* preview)
{
  const nlohmann::ordered_json request = {
    {"jsonrpc", "2.0"},
    {"id", id},
    {"method", "elicitation/create"},
    {"params", override_question(tool, veto, preview)},
  };
  return request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

OverrideReply read_override_answer(const nlohmann::json& response)
{
  const auto& error = member(response, "error");
  if (error.is_object()) {
    const auto& message = member(error, "message");
    return {OverrideAnswer::error, message.is_string() ? message.get<std::string>() : ""};
  }
  const auto& result = member(response, "result");
  if (!result.is_object()) {
    return {};
  }
  const auto& action = member(result, "action");
  if (action == "accept") {
    return {member(member(result, "content"), "allow") == true ? OverrideAnswer::allow
                                                               : OverrideAnswer::not_confirmed,
            {}};
  }
  if (action == "decline") {
    return {OverrideAnswer::decline, {}};
  }
  if (action == "cancel") {
    return {OverrideAnswer::cancel, {}};
  }
  return {};
}

bool person_allowed(const OverrideReply& reply, std::chrono::steady_clock::duration elapsed)
{
  return reply.answer == OverrideAnswer::allow && elapsed >= k_person_answer_time;
}

std::string refused_reply_outcome(const OverrideReply& reply,
                                  std::chrono::steady_clock::duration elapsed)
{
  switch (reply.answer) {
  case OverrideAnswer::error: {
    const std::string said =
      reply.error.empty() ? "" : " (" + in_quotes(cut_to(reply.error, k_error_message_bytes)) + ")";
    return asked_client() + "the client answered with an error" + said
           + ", so fsguard did not write it.";
  }
  case OverrideAnswer::unreadable:
    return asked_client() + "the client's answer was none of accept, decline or cancel, so "
                            "fsguard did not write it.";
  default:
    break;
  }
  const std::string_view action = action_of(reply.answer);
  if (elapsed < k_person_answer_time) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
    return asked_client() + "the client answered " + std::string(action) + " after "
           + std::to_string(ms) + " ms, sooner than a person can read the question: the client "
           "answered without asking a person, so fsguard did not write it.";
  }
  switch (reply.answer) {
  case OverrideAnswer::decline:
    return asked_person() + "the client answered decline: the user refused it.";
  case OverrideAnswer::cancel:
    return asked_person() + "the client answered cancel: the question was dismissed without a "
                            "choice, so fsguard did not write it.";
  default: // not_confirmed
    return asked_person() + "the client answered accept without the confirmation (allow was "
                            "not true), so fsguard did not write it.";
  }
}

std::string outdated_allow_outcome()
{
  return asked_person() + "the client answered accept, but while the user decided the file "
                          "changed again or its path came to name another file, so fsguard did "
                          "not write it.";
}

std::string redecided_allow_outcome()
{
  return asked_person() + "the client answered accept, but fsguard decided the write again "
                          "before sending it and refuses it for the reason below, which the "
                          "user was not asked about, so fsguard did not write it.";
}

std::string unanswered_outcome(std::string_view why)
{
  return asked_person() + std::string(why) + ".";
}

} // namespace fsguard
