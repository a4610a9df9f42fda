// The wire's parts in one include, for code that uses many of them (the
// relay, tests). Each part is a header of its own; include the part you use:
// - client_message: classifying the client's lines (the full parse);
// - lenient_json: the nesting limit, and what JSON.parse reads otherwise;
// - upstream_skim: the skim of upstream lines, and what it tells;
// - answer_text: decoding the text an answer shows;
// - ids: id keys, and an answer's id from its ends;
// - rpc_error: the error codes and error lines fsguard answers with;
// - sdk_schema: what the MCP SDK's schema rejects, which the server drops;
// - json_members: reading members of a parsed message.
#pragma once

#include "proxy/jsonrpc/answer_text.hpp"
#include "proxy/jsonrpc/client_message.hpp"
#include "proxy/jsonrpc/ids.hpp"
#include "proxy/jsonrpc/json_members.hpp"
#include "proxy/jsonrpc/lenient_json.hpp"
#include "proxy/jsonrpc/rpc_error.hpp"
#include "proxy/jsonrpc/sdk_schema.hpp"
#include "proxy/jsonrpc/upstream_skim.hpp"
