# Message builders for the protocol and torture tests. Lines are built as JSON
# text so ids, numbers and {} vs [] are exactly what the test says.

legacy_versions <- c("2025-11-25", "2025-06-18", "2024-11-05")
all_versions <- c("2026-07-28", legacy_versions)

rpc <- function(id, method, params = NULL) {
  id_json <- if (is.null(id)) NULL else if (is.character(id)) encode_json_string(id) else format(id, scientific = FALSE)
  paste0("{\"jsonrpc\":\"2.0\"",
         if (!is.null(id_json)) paste0(",\"id\":", id_json),
         ",\"method\":", encode_json_string(method),
         if (!is.null(params)) paste0(",\"params\":", params), "}")
}

encode_json_string <- function(x) as.character(jsonlite::toJSON(x, auto_unbox = TRUE))

initialize_line <- function(version, id = 0) {
  rpc(id, "initialize", sprintf(
    '{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"testthat","version":"1"}}', version))
}

initialized_line <- function() rpc(NULL, "notifications/initialized")

modern_meta <- function(version = "2026-07-28") {
  sprintf('"_meta":{"io.modelcontextprotocol/protocolVersion":"%s","io.modelcontextprotocol/clientCapabilities":{}}', version)
}

modern <- function(id, method, params = "", version = "2026-07-28") {
  inner <- if (nzchar(params)) paste0(params, ",", modern_meta(version)) else modern_meta(version)
  rpc(id, method, paste0("{", inner, "}"))
}

call_params <- function(name, arguments = "{}") sprintf('"name":"%s","arguments":%s', name, arguments)

legacy_call <- function(id, name, arguments = "{}") rpc(id, "tools/call", paste0("{", call_params(name, arguments), "}"))

modern_call <- function(id, name, arguments = "{}", version = "2026-07-28") {
  modern(id, "tools/call", call_params(name, arguments), version)
}

protocol_server <- function() mcp_fixture_server("protocol-server.R")

# The text of the first content block of a tools/call answer.
first_text <- function(response) response$result$content[[1]]$text

expect_rpc_error <- function(response, code) {
  testthat::expect_false(is.null(response$error), info = "expected an error response")
  testthat::expect_identical(as.integer(response$error$code), as.integer(code))
}
