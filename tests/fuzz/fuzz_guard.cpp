// libFuzzer target over the parts that see untrusted input: client message
// classification, the upstream skim, read_multiple_files splitting, path
// resolution, the tracker's write decisions against a model, and the
// guard's intakes of lines from either peer.
//
// The first byte picks the part; the rest is its input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fake_disk.hpp"
#include "json_types.hpp"
#include "proxy/jsonrpc/json_reader.hpp"
#include "proxy/jsonrpc/json_string.hpp"
#include "proxy/jsonrpc/answer_text.hpp"
#include "proxy/jsonrpc/client_message.hpp"
#include "proxy/jsonrpc/ids.hpp"
#include "proxy/jsonrpc/json_members.hpp"
#include "proxy/jsonrpc/lenient_json.hpp"
#include "proxy/jsonrpc/sdk_schema.hpp"
#include "proxy/jsonrpc/upstream_skim.hpp"
#include "proxy/jsonrpc/plain_tool_call.hpp"
#include "proxy/guard/client_intake.hpp"
#include "proxy/guard/upstream_intake.hpp"
#include "proxy/stores/real_disk.hpp"
#include "proxy/guard/server_paths.hpp"
#include "tracker/path.hpp"
#include "tracker/read_response.hpp"
#include "tracker/profiles.hpp"
#include "tracker/tool_map.hpp"
#include "tracker/tracker.hpp"

using namespace fsguard;
using fsguard::testing::FakeDisk;

namespace {

void check(bool condition)
{
  if (!condition) {
    std::abort();
  }
}

// The fast reader must read exactly what nlohmann reads, or leave it alone.
void check_fast_reader(std::string_view input)
{
  std::optional<ContentHash> content_hash;
  const auto fast = read_json_fast(input, content_hash);
  // Read again into the tree the last input left, read or not: the same
  // verdict, and below, the same tree.
  static nlohmann::json reused;
  std::optional<ContentHash> reused_hash;
  check(read_json_fast(input, reused, reused_hash) == fast.has_value());
  if (!fast) {
    return;
  }
  check(nesting_depth(input) <= k_max_nesting); // what it reads needs no depth check
  auto full = nlohmann::json::parse(input, nullptr, false);
  check(!full.is_discarded());
  std::optional<ContentHash> expected;
  if (full.is_object() && full.contains("params") && full["params"].is_object()
      && full["params"].contains("arguments") && full["params"]["arguments"].is_object()) {
    auto& arguments = full["params"]["arguments"];
    if (const auto content = arguments.find("content"); content != arguments.end()) {
      if (content->is_string()) {
        expected = hash_bytes(content->get_ref<const std::string&>());
      }
      arguments.erase(content);
    }
  }
  check(*fast == full && same_types(*fast, full) && fast->dump() == full.dump()
        && content_hash == expected);
  check(reused == full && same_types(reused, full) && reused_hash == expected);
}

// A filter that gives every tool the same use.
class UseFor final : public PlainCallFilter {
public:
  explicit UseFor(PlainCallUse use) : m_use(use) {}
  PlainCallUse use_of(std::string_view) override { return m_use; }

private:
  PlainCallUse m_use;
};

// What the plain tools/call scan accepts, the full parse reads the same
// way: a request the server accepts, with that id key and tool name, and
// for a guarded tool the same arguments and content. A guarded tool's scan
// reads the arguments with the client-line reader, which the relay's scan
// does not: it may accept more (numbers with exponents), never less, and
// refuses nothing the full parse reads as a plain call with arguments the
// reader takes.
void check_plain_tool_call(std::string_view input, const ClientMessage& message)
{
  UseFor relay(PlainCallUse::relay);
  const auto relayed = scan_plain_tool_call(input, relay);
  UseFor guard(PlainCallUse::guard);
  static PlainCallArguments arguments; // reused, as the relay reuses it
  // What a last line may have left, which the scan must replace whole:
  // a content always, and every other time a tree of another shape.
  static unsigned scans = 0;
  arguments.content = ContentArgument{ContentHash{1, 2}, TextBytes::copy_of("stale")};
  if (++scans % 2 == 0) {
    arguments.tree = nlohmann::json{{"stale", {1, 2}}};
  }
  const auto guarded = scan_plain_tool_call(input, guard, &arguments);
  check(!relayed || guarded);
  if (guarded) {
    check(!relayed || (relayed->raw_id == guarded->raw_id && relayed->name == guarded->name));
    const auto& full = member(member(message.body, "params"), "arguments");
    check(full == arguments.tree && same_types(full, arguments.tree));
    check(message.content.hash == arguments.content.hash);
    check(message.content.text == arguments.content.text);
    check(message.content.traits == arguments.content.traits);
  }
  const auto call = guarded;
  if (!call) {
    return;
  }
  check(message.kind == MessageKind::request);
  check(request_the_server_drops(message.body).empty());
  check(method_of(message.body) == "tools/call");
  const auto& id = member(message.body, "id");
  check(id_key(id) == id_key_of_raw(call->raw_id));
  check(plain_id(call->raw_id) == id);
  check(!(id.is_string() && id.get_ref<const std::string&>().starts_with(k_own_id_prefix)));
  const auto& name = member(member(message.body, "params"), "name");
  check(name.is_string() && name.get_ref<const std::string&>() == call->name);
}

// The string decoder makes the same of a body whatever width it scans at,
// and a plain string ends where the decoder finds it: for the body from the
// start of `input`, and from just past its first quote.
void check_string_decoders(std::string_view input)
{
  std::string_view bodies[] = {input, {}};
  if (const auto quote = input.find('"'); quote != std::string_view::npos) {
    bodies[1] = input.substr(quote + 1);
  }
  for (const std::string_view body : bodies) {
    const char* const end = body.data() + body.size();
    DecodedText best;
    const char* const best_stop = decode_json_string(body.data(), end, best, Simd::best);
    for (const Simd simd : {Simd::sse2, Simd::none}) {
      DecodedText other;
      check(decode_json_string(body.data(), end, other, simd) == best_stop);
      check(best_stop == nullptr || (other.text == best.text && other.facts == best.facts));
    }
    if (const char* quote = plain_string_end(body.data(), end)) {
      check(best_stop == quote + 1 && best.text == std::string_view(body.data(), quote));
    }
  }
}

void fuzz_client_message(std::string_view input)
{
  check_fast_reader(input);
  check_string_decoders(input);
  const ClientMessage message = parse_client_message(input);
  check_plain_tool_call(input, message);
  check(message.kind != MessageKind::unreadable || !json_parse_rejects(input).empty());
  (void)message_the_server_drops(message.body);
  if (message.kind != MessageKind::request && message.kind != MessageKind::notification) {
    return;
  }
  const auto& id = member(message.body, "id");
  if (id.is_string()) {
    check(id_key(id) == id.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  (void)id_key(id);
  (void)request_the_server_drops(message.body);
  if (method_of(message.body) == "tools/call" && message.body.contains("params")) {
    const auto& params = message.body["params"];
    if (params.is_object() && params.contains("name") && params["name"].is_string()) {
      const auto call = describe_call(server_filesystem_tools(), params["name"].get<std::string>(),
                                      params.value("arguments", nlohmann::json()));
      (void)call;
    }
  }
  auto body = message.body;
  release_tree(body);
  check(body.is_null());
}

void fuzz_skim(std::string_view input)
{
  const SkimmedMessage skimmed = skim_message(input);
  // The fast path for the SDK's bytes finds what the walk over any object
  // finds.
  check(skimmed == skim_message_generic(input));
  // A text decoded as the line is skimmed tells the skim where it ends,
  // and changes nothing it finds.
  DecodedAnswerText first_text;
  if (decode_sdk_answer_text(input, answer_id_from_ends(input), first_text, 1 << 20)) {
    check(skim_message(input, first_text.end) == skimmed);
    const auto raw = skim_first_text(skimmed);
    check(!raw || raw->data() + raw->size() == first_text.end);
  }
  if (skimmed.is_json_object && !skimmed.raw_id.empty()) {
    check(skimmed.raw_id.data() >= input.data()
          && skimmed.raw_id.data() + skimmed.raw_id.size() <= input.data() + input.size());
  }
  // What the one pass found inside the result answers as skimming the
  // result again would.
  SkimmedMessage again = skimmed;
  again.result = {};
  check(skim_tool_succeeded(skimmed) == skim_tool_succeeded(again));
  check(skim_shows_content(skimmed) == skim_shows_content(again));
  check(skim_first_text(skimmed) == skim_first_text(again));
  // Whatever the skim says, a line the full parser accepts as an object with
  // a plain id must skim to that id.
  const auto parsed = nlohmann::json::parse(input, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_object() && parsed.contains("id") && skimmed.is_json_object
      && input.find('\\') == std::string_view::npos && input.find("\"id\"") == input.rfind("\"id\"")) {
    const auto id = nlohmann::json::parse(skimmed.raw_id, nullptr, false);
    check(!id.is_discarded() && id == parsed["id"]);
  }
}

void fuzz_parts(std::string_view input)
{
  // "path1\0path2\0...\0\0text"
  std::vector<std::string> paths;
  while (!input.empty()) {
    const auto end = input.find('\0');
    if (end == 0 || end == std::string_view::npos) {
      input.remove_prefix(end == 0 ? 1 : input.size());
      break;
    }
    paths.emplace_back(input.substr(0, end));
    input.remove_prefix(end + 1);
  }
  std::size_t work = 0;
  const auto read = parts_read(input, paths, &work);
  check(read.size() == paths.size());
  check(work <= 4 * input.size() + 64 * 1024 + 1); // linear, or it gives up
}

FakeDisk workspace()
{
  FakeDisk disk;
  disk.make_directory("/ws");
  disk.make_directory("/ws/sub");
  disk.write("/ws/a.txt", "a");
  disk.write("/ws/caf\xC3\xA9.txt", "nfc");
  disk.symlink("/ws/link", "a.txt");
  disk.symlink("/ws/sub/up", "..");
  disk.symlink("/loop", "/loop");
  return disk;
}

void fuzz_path(std::string_view input)
{
  FakeDisk disk = workspace();
  PathContext server;
  server.rules = PathRules::server_filesystem;
  server.home = "/ws";
  server.cwd = "/";
  server.allowed_sets = {{"/ws"}, {"/ws/sub", "/ws"}};
  for (const PathContext& context : {PathContext{}, server}) {
    const auto resolved = resolve_path(disk, input, context);
    if (resolved) {
      check(!resolved->empty() && resolved->front() == '/');
      check(resolved->find("//") == std::string::npos);
      check(lexically_normal(*resolved) == *resolved);
    }
  }
}

// Drives the tracker with a sequence of agent reads and writes and outside
// changes, and checks each write decision against a model that knows what
// content the agent last saw: a write must be allowed exactly when the file
// is absent, or present with the content the agent last read or wrote, and
// that content is valid UTF-8 (the reads here are text views; the agent's
// own writes are ASCII).
void fuzz_tracker(std::string_view input)
{
  FakeDisk disk = workspace();
  Tracker tracker(disk);
  const std::string files[] = {"/ws/a.txt", "/ws/b.txt", "/ws/sub/c.txt"};
  const std::string contents[] = {"a", "b", "aa", "ab", "", "caf\xE9"};
  std::map<std::string, std::string> on_disk{{"/ws/a.txt", "a"}};
  std::map<std::string, std::string> known; // what the agent last saw
  int counter = 0;
  for (std::size_t index = 0; index + 1 < input.size(); index += 2) {
    const auto op = static_cast<unsigned char>(input[index]) % 12;
    const auto arg = static_cast<unsigned char>(input[index + 1]);
    const std::string& file = files[arg % 3];
    const std::string& content = contents[(arg / 3) % 6];
    const bool exists = on_disk.contains(file);
    switch (op) {
    case 0: { // the agent reads the file
      const ReadStart start = tracker.begin_read(file);
      tracker.finish_read(file, start, ReadExtent::whole, ReadView::utf8_text);
      tracker.settle_reads(); // as the relay does once the response is forwarded
      if (exists) known[file] = on_disk[file];
      else known.erase(file);
      break;
    }
    case 1: { // the agent writes it
      const auto veto = tracker.check_write(file, WriteKind::overwrite, PartialReadAllowsOverwrite::no);
      const bool allowed = !exists
                           || (known.contains(file) && known[file] == on_disk[file]
                               && content_traits(on_disk[file]).valid_utf8);
      check(veto.has_value() != allowed);
      if (!exists) known.erase(file);
      if (allowed) {
        const std::string written = "agent" + std::to_string(++counter);
        disk.write(file, written);
        on_disk[file] = written;
        tracker.finish_write(file, testing::fake_hash(written));
        known[file] = written;
      }
      break;
    }
    case 2: disk.write(file, content); on_disk[file] = content; break;
    case 3: disk.write_keeping_mtime(file, content); on_disk[file] = content; break;
    case 4: disk.replace(file, content); on_disk[file] = content; break;
    case 5: if (exists) disk.set_mtime(file, arg * 1'000'000LL); break;
    case 6: if (exists) disk.chmod(file, 0600 + arg % 8); break;
    case 7: if (exists) { disk.remove(file); on_disk.erase(file); } break;
    case 8: disk.advance(arg * 1'000'000LL); break;          // up to 0.25 s
    case 9: disk.advance(arg * 100'000'000LL); break;        // up to 25 s
    case 10: if (exists) disk.replace(file, on_disk[file]); break; // identical rewrite
    case 11: { // the agent reads the file, and it is rewritten before fsguard hashes it
      const ReadStart start = tracker.begin_read(file);
      tracker.finish_read(file, start, ReadExtent::whole, ReadView::utf8_text);
      const SeenRecord* record = tracker.find(file);
      const bool hash_owed = record != nullptr && record->hash_state == HashState::owed;
      const std::string seen = exists ? on_disk[file] : std::string();
      disk.write(file, content);
      on_disk[file] = content;
      tracker.settle_reads();
      if (!exists) {
        known.erase(file);
      } else if (hash_owed) {
        known[file] = std::string(1, '\0'); // unknown: no content equals it, so writes are vetoed
      } else {
        known[file] = seen; // hashed before the response went on
      }
      break;
    }
    }
  }
}

// Lines from either peer (each line's first byte: even, the client's; odd,
// the upstream's), through the intakes of a guard that knows its server,
// as the relay hands them over: nothing crashes, and every line fsguard
// writes to the client itself is JSON.
void fuzz_intakes(std::string_view input)
{
  FakeDisk disk = workspace();
  Guard guard(disk, GuardSettings{}, "/home", "/ws");
  ClientIntake client(guard);
  UpstreamIntake upstream(guard);
  const auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  Outbox out;
  const auto from_client = [&](std::string line) {
    line += '\n';
    client.take(OutgoingLine::borrowed(line), now, out);
    out.own_lines(); // the relay writes them before its reader reads on
  };
  const auto from_upstream = [&](const std::string& line) {
    (void)upstream.take(line, now, out);
    upstream.line_sent();
  };
  from_client(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}})");
  from_upstream(
    R"({"jsonrpc":"2.0","id":0,"result":{"serverInfo":{"name":"secure-filesystem-server","version":"0.2.0"}}})");
  from_upstream(
    R"({"result":{"content":[{"type":"text","text":"Allowed directories:\n/ws"}]},"jsonrpc":"2.0","id":"fsguard/allowed-directories/1"})");
  for (std::size_t at = 0; at < input.size();) {
    const std::size_t end = std::min(input.find('\n', at), input.size());
    const std::string_view line = input.substr(at, end - at);
    at = end + 1;
    if (line.empty()) {
      continue;
    }
    const std::string text(line.substr(1));
    if (static_cast<unsigned char>(line.front()) % 2 == 0) {
      from_client(text);
    } else {
      from_upstream(text);
    }
    for (const auto& sent : out.to_client) {
      check(nlohmann::json::accept(sent));
    }
    out.clear();
  }
  guard.expire(now + std::chrono::hours(1), out);
  (void)guard.take_unanswered();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0) {
    return 0;
  }
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
  case 0: fuzz_client_message(input); break;
  case 1: fuzz_skim(input); break;
  case 2: fuzz_parts(input); break;
  case 3: fuzz_path(input); break;
  case 4: fuzz_tracker(input); break;
  case 5: fuzz_intakes(input); break;
  }
  return 0;
}
