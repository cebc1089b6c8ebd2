#' Differences from CRAN mcplite 0.2.0
#'
#' @description
#' This package is meant to replace the pure-R mcplite 0.2.0 released on CRAN
#' without changes to server scripts, clients or their tests: the R API is
#' the same, and a server answers the same requests with the same JSON. The
#' places where the answers differ on purpose are listed below, each with its
#' reason. Everything else is checked: the package's tests start one server
#' script under both packages, send both the same requests (legacy and
#' modern clients, successful calls, tool errors, protocol errors, rich and
#' structured results) and fail on any difference that is not in this list,
#' leaving aside only the wording of JSON-RPC error messages and the version
#' number in the server's identity.
#'
#' Where the MCP schema of the protocol version (or JSON-RPC itself) decides
#' what an answer must look like, this package follows it; where the
#' specification allows either form, it answers as CRAN mcplite does unless
#' there is a strong reason not to.
#'
#' @eval cran_differences_rd()
#' @seealso [mcp_server()] for the protocol versions served and how each is
#'   answered.
#' @name mcplite-cran
NULL

# The deliberate wire differences, one row each. The interop test
# (tests/testthat/test-interop.R) reads this table and the Rd section above is
# rendered from it, so the documentation and the test cannot drift apart.
#
# case:   the labels of the test's requests this row covers (`*` is a
#         wildcard; alternatives separated by " | ")
# path:   the JSON paths in the answer that differ (same conventions; a row
#         also covers everything below its paths); "<answer>" when one
#         package answers and the other does not
# r_below: the row applies only on R versions below this one (NA: always)
cran_differences <- function() {
  rows <- list(
    list(
      case = "m-version-legacy | m-version-legacy-call",
      path = "result | error",
      request = "A request whose `_meta` names a legacy protocol version (2025-11-25, 2025-06-18 or 2024-11-05).",
      ours = "Served, in the shape of that version.",
      cran = "Error -32022 (unsupported protocol version).",
      why = paste(
        "Both packages list the legacy versions in `server/discover` (`supportedVersions`), so a client",
        "may pick one of them for a request; the specification allows either answer, and serving it keeps",
        "the discovery result truthful."
      )
    ),
    list(
      case = "m-version-unsupported | m-version-unknown",
      path = "error.data.supported",
      request = "A request whose `_meta` names a version neither package serves.",
      ours = "Error -32022 listing all four versions in `data.supported`.",
      cran = "Error -32022 listing only 2026-07-28.",
      why = "The list matches what `server/discover` advertises and what is served (previous entry)."
    ),
    list(
      case = "parse-error | batch | scalar | null-id | fractional-id | bool-id",
      path = "id",
      request = "A line that is not JSON, a batch (array), a JSON scalar, or a request whose `id` is null, fractional or not a string or number.",
      ours = "The error response has no `id` member.",
      cran = "The error response has `\"id\": null`.",
      why = paste(
        "The MCP schemas decide: from 2025-11-25 on an error response may leave out an `id` it could not",
        "read, but an `id` that is present must be a string or an integer, so `null` is invalid."
      )
    ),
    list(
      case = "e-params-scalar | e-params-array",
      path = "result | error",
      request = "A request whose `params` is a number or an array (for example `ping` with `\"params\": [1]`).",
      ours = "Error -32600 for a scalar, -32602 for an array.",
      cran = "Answered as if `params` were absent.",
      why = "JSON-RPC 2.0 requires `params` to be an object or an array, and every MCP schema requires an object."
    ),
    list(
      case = "response",
      path = "<answer>",
      request = "A JSON-RPC response (a message with `result` or `error` and no `method`) sent to the server.",
      ours = "Ignored (a line on standard error).",
      cran = "Error -32600 carrying the response's id.",
      why = "A response is not a request, and JSON-RPC answers requests only; mcplite never sends requests, so it awaits no responses."
    ),
    list(
      case = "l3-list-extra",
      path = "result | error",
      request = "`tools/list` with a member in `params` other than `cursor` and `_meta`.",
      ours = "Served.",
      cran = "Error -32602.",
      why = "The MCP schemas leave request parameters open to other members, so the request is valid."
    ),
    list(
      case = "init-name-empty",
      path = "result | error",
      request = "`initialize` whose `clientInfo.name` is the empty string.",
      ours = "Negotiated.",
      cran = "Error -32602.",
      why = "The schema asks for a string, and the empty string is one."
    ),
    list(
      case = "l1-list",
      path = "result.tools[*].annotations",
      request = "`tools/list` from a 2024-11-05 client.",
      ours = "Tool `annotations` left out.",
      cran = "Tool `annotations` sent.",
      why = "The 2024-11-05 schema has no tool annotations (they came in 2025-03-26); each version gets its own vocabulary."
    ),
    list(
      case = "l2-list | l3-list | l3-list-after-reinit | m-*list | m-loglevel-ok | m-clientinfo-ok",
      path = "result.tools[*].annotations.readOnlyHint | result.tools[*].annotations.read_only_hint",
      request = "`tools/list`, for a tool whose `annotations` use snake_case names such as `read_only_hint`.",
      ours = "MCP's names (`readOnlyHint`).",
      cran = "The names as written (`read_only_hint`).",
      why = "The MCP schemas name the hints in camelCase; clients do not recognise the snake_case spelling."
    ),
    list(
      case = "m-initialize",
      path = "error.code",
      request = "`initialize` carrying the modern per-request `_meta` (and no legacy params).",
      ours = "Handled as a legacy `initialize`: error -32602 naming the missing `protocolVersion`.",
      cran = "Error -32601 (method not found), as for a modern request.",
      why = paste(
        "2026-07-28 says an `initialize` always selects the legacy era, whatever `_meta` holds,",
        "so its params are checked as a legacy client's."
      )
    ),
    list(
      case = "pre-unknown-method",
      path = "error.code",
      request = "A method neither package implements (e.g. `resources/list`), before any `initialize`.",
      ours = "Error -32601 (method not found).",
      cran = "Error -32600 (server not initialized).",
      why = "JSON-RPC gives -32601 to a method the server does not have, whatever state it is in; a modern client needs no `initialize` at all."
    ),
    list(
      case = "*-unsendable | l1-media | *-ellmer-remote",
      path = "result.content[0].text",
      request = paste(
        "`tools/call` of a tool whose value cannot be sent: an R object with no JSON form, audio or a",
        "resource link for a 2024-11-05 client, or ellmer content with no MCP block."
      ),
      ours = "A tool error (`isError: true`) whose text explains the problem in mcplite's words.",
      cran = "A tool error with CRAN mcplite's wording.",
      why = "Only the wording of the explanation differs; mcplite's names the object's class and the constructor to use instead."
    ),
    list(
      case = "*-ellmer-content | *-ellmer-value | *-ellmer-error",
      path = "result.content | result.isError",
      request = "`tools/call` of an ellmer tool returning ellmer content (`ContentText`, `ContentImageInline`, `ContentToolResult`).",
      ours = "The equivalent text and image blocks, the tool result's value, or a tool error with its message.",
      cran = "A tool error: the S7 properties cannot be read with `@` on these R versions.",
      why = "mcplite reads the properties in a way that works on every supported R version.",
      r_below = "4.3.0"
    )
  )
  field <- function(name, default = NA_character_) {
    vapply(rows, function(r) if (is.null(r[[name]])) default else r[[name]], character(1))
  }
  data.frame(
    case = field("case"), path = field("path"), request = field("request"),
    ours = field("ours"), cran = field("cran"), why = field("why"), r_below = field("r_below"),
    stringsAsFactors = FALSE
  )
}

# The Rd section listing cran_differences(), for roxygen's @eval (markdown).
cran_differences_rd <- function() {
  d <- cran_differences()
  where <- function(path) {
    if (path == "<answer>") return("the whole answer")
    paste0("`", strsplit(path, " | ", fixed = TRUE)[[1]], "`", collapse = ", ")
  }
  items <- vapply(seq_len(nrow(d)), function(i) {
    paste0(
      "* ", d$request[[i]],
      if (!is.na(d$r_below[[i]])) sprintf(" (R before %s only.)", d$r_below[[i]]) else "",
      "\n  This package: ", d$ours[[i]],
      "\n  CRAN mcplite 0.2.0: ", d$cran[[i]],
      "\n  Why: ", d$why[[i]],
      "\n  Where in the answer: ", where(d$path[[i]]), "."
    )
  }, character(1))
  c(
    "@section Deliberate differences:",
    "Each entry names the request, what each package answers, why, and where the answers differ.",
    "",
    paste(items, collapse = "\n\n")
  )
}
