// Asking the person, not the model, whether one vetoed write may go ahead:
// the MCP elicitation request fsguard sends the client, how its answer
// reads, and what the model is told of it. (The client shows the request to
// the user; the model never sees it and cannot answer it.)
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tracker/veto.hpp"

namespace fsguard {


// Whether a veto of `code` is one the person may override: the agent did
// not see the content it would replace (never read, read in part, changed
// since, read too long ago). Setup and safety vetoes are not.
bool may_override(VetoCode code);

// How much of the file a `not_read` question shows: its first lines, at
// most this many, and at most this many bytes.
inline constexpr std::size_t k_preview_lines = 20;
inline constexpr std::size_t k_preview_bytes = 2048;

// A file larger than this is not read for a question: only its size is shown.
inline constexpr std::int64_t k_preview_source_bytes = 1 << 20;

// What a question shows the person of the file the write would replace.
struct FilePreview {
  enum class Lines {
    shown,    // `first_lines` holds them
    not_text, // the file is not UTF-8 text: only its size is shown
    not_read, // too large for fsguard to read for the question
  };
  std::int64_t size = 0;
  Lines lines = Lines::not_read;
  std::string first_lines; // the file's own bytes, cut at a character
  bool whole = false;      // `first_lines` is the whole file
};

// The preview of a file that holds `bytes`.
FilePreview preview_of(std::string_view bytes);

// The params of the elicitation/create request asking whether the agent's
// `tool` call refused with `veto` may go ahead: the message and the
// requested schema (a boolean `allow`). `preview` (may be null) is what it
// shows of the file. Everything that comes from the agent is quoted, with
// its control characters shown.
nlohmann::ordered_json override_question(const std::string& tool, const Veto& veto,
                                         const FilePreview* preview);

// The elicitation/create request with id `id` asking whether the agent's
// `tool` call refused with `veto` may go ahead, as one JSON line; `preview`
// (may be null) is what it shows of the file. Everything that comes from
// the agent is quoted, with its control characters shown.
std::string override_request(const std::string& id, const std::string& tool, const Veto& veto,
                             const FilePreview* preview);

// What the client answered to an override question.
enum class OverrideAnswer {
  allow,         // accept, with allow: true
  not_confirmed, // accept, without allow: true
  decline,       // decline
  cancel,        // cancel: dismissed without a choice
  error,         // a JSON-RPC error
  unreadable,    // a result of another shape
};

// The client's answer: what it was, and an error's message.
struct OverrideReply {
  OverrideAnswer answer = OverrideAnswer::unreadable;
  std::string error; // OverrideAnswer::error: the client's message, if any
};

// Reads the client's `response` to an override question.
OverrideReply read_override_answer(const nlohmann::json& response);

// An answer that came sooner than this after the question was sent came
// from the client itself: no person reads the question and answers that
// fast (headless clients, such as `claude -p`, cancel within milliseconds).
inline constexpr std::chrono::milliseconds k_person_answer_time{1000};

// Whether `reply`, which came `elapsed` after the question, lets the write
// go ahead: a person's accept with allow: true.
bool person_allowed(const OverrideReply& reply, std::chrono::steady_clock::duration elapsed);

// What the model is told when `reply`, `elapsed` after the question, did
// not let the write go ahead: what the client answered, and whether a
// person can have answered at all. One or two sentences.
std::string refused_reply_outcome(const OverrideReply& reply,
                                  std::chrono::steady_clock::duration elapsed);

// What the model is told when the person allowed the write but the file
// changed, or its path came to name another file, while they decided.
std::string outdated_allow_outcome();

// What the model is told when the person allowed the change, but deciding
// it again (the one decision every change asks) refused it for another
// reason than the one the person was asked about.
std::string redecided_allow_outcome();

// What the model is told when no answer came; `why`, e.g. "no answer came
// within 30 s, so fsguard withdrew the question".
std::string unanswered_outcome(std::string_view why);

} // namespace fsguard
