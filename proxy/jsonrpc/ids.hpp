// JSON-RPC ids: the key that finds a request again whichever way its id is
// spelled, and the id of an answer in the MCP SDK's shape, read from the
// line's ends.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fsguard {

// Ids of fsguard's own requests start with this; clients may not use it.
inline constexpr std::string_view k_own_id_prefix = "fsguard/";

// A canonical text for a JSON-RPC id, equal for ids that the peer would
// echo back as equal (1 and 1.0 are the same id; "1" is another).
std::string id_key(const nlohmann::json& id);

// id_key() of the id whose JSON text is `raw_id` (as skimmed from an
// upstream line), or "" if it is not JSON. Plain integers and plain ASCII
// strings, which are the ids clients send, are their own key and are not
// parsed.
std::string id_key_of_raw(std::string_view raw_id);

// The raw id at the end of `tail`, the last bytes of an answer serialized
// as the MCP SDK does ({"result":...,"jsonrpc":"2.0","id":ID}), or "" if
// the tail does not end that way.
std::string_view trailing_id(std::string_view tail);

// The id key of a successful answer written as the MCP SDK writes one,
// from its ends alone: a line that begins {"result": and ends with its id
// (trailing_id). Empty if the line is not of that shape. For a line that is
// JSON, the member before the last closing brace is the top-level
// object's, so the key is the answer's; the bytes between are not read,
// so use it only where a line that is not JSON may go on as it is.
std::string answer_key_from_ends(std::string_view line);

// The raw id answer_key_from_ends() reads the key from, where it lies in
// `line`; empty where that gives no key.
std::string_view answer_id_from_ends(std::string_view line);

} // namespace fsguard
