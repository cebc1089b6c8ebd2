#' mcplite: serve R functions as MCP tools over standard I/O
#'
#' @description
#' mcplite lets a local Model Context Protocol client (a chat app or coding
#' assistant) call R functions. Describe each function with [tool()] and the
#' [tool-types] helpers, put the tools in a script that finishes with
#' [mcp_server()], and register that script with the client, run as
#' `Rscript --vanilla /absolute/path/to/server.R`.
#'
#' Tools stay ordinary R functions. Their return values are sent as text by
#' default; [tool_result()] and the [content-blocks] constructors give control
#' over content, structured output and error reporting (see
#' [mcplite-results]). Tools made with [ellmer::tool()] are accepted too,
#' without ellmer having to be installed where the server runs. Slow tools
#' can run side by side on mirai workers (`mcp_server(workers = )`).
#'
#' Schemas describe arguments to the client; they do not validate them or
#' grant any permission. Each tool is responsible for checking its inputs, for
#' what it is allowed to do, and for the size of what it returns. Standard
#' output carries the protocol, so write diagnostics to standard error.
#'
#' Between writing the script and connecting a client, [mcp_check()] starts
#' the script the way clients do and says what would fail there, and
#' [mcp_config()] prints the client configuration. [mcp_client()] talks to
#' any stdio MCP server from R, for trying and testing tools, and
#' [plot_image()] turns a plot into an image block for a result.
#'
#' The guides "Get started" (`vignette("mcplite")`), "Write tools" and
#' "Return results" are installed only when the package is built with its
#' vignettes (`remotes::install_local(build_vignettes = TRUE)`, or
#' `R CMD build` then `R CMD INSTALL` on the tarball; plain
#' `R CMD INSTALL .` skips them). They are also on the package website and in
#' the `vignettes/` folder of the source.
#'
#' @keywords internal
"_PACKAGE"

#' How tool return values become MCP results
#'
#' @description
#' A tool can return any R value or a [tool_result()]. This page describes how
#' each is turned into JSON and which options control that.
#'
#' @section Ordinary return values:
#' A character vector becomes one text block: a single string as is, several
#' strings joined with newlines. Strings are never parsed, even when they look
#' like JSON, and a `json` object from jsonlite is treated as a string too; to
#' control the conversion of a particular value, convert it to JSON text
#' yourself and return that text.
#'
#' Any other value is converted to JSON the way [jsonlite::toJSON()] would,
#' using the payload options below, and sent as one text block. A plain list is
#' just a value here, not a result object. `NULL` is sent as `{}` and an empty
#' unnamed `list()` as `[]`.
#'
#' @section Structured content:
#' `structured_content` in [tool_result()] follows the same jsonlite
#' conventions and options, including classes, dimensions, [I()] and
#' `jsonlite::unbox()`. The one exception is the root: an empty `list()` there
#' is sent as the empty object `{}` (nested empty lists stay `[]`). `NULL`
#' means no structured content at all, not a JSON `null`. Making the value
#' match the tool's `output_schema` is up to the tool.
#'
#' @section Mapping with the default options:
#' What a payload value becomes with the default options (jsonlite's defaults
#' with `auto_unbox = TRUE`; the text copy shows the same JSON):
#'
#' | R value | JSON |
#' | --- | --- |
#' | `TRUE`, `c(TRUE, NA)` | `true`, `[true,null]` |
#' | `1L`, `c(1L, NA)` | `1`, `[1,"NA"]` |
#' | `3.14159`, `1e5`, `c(1, NA, NaN, Inf)` | `3.1416`, `100000`, `[1,"NA","NaN","Inf"]` (4 decimal places) |
#' | `"a"`, `c("a", NA)` | `"a"`, `["a",null]` |
#' | `character(0)`, `integer(0)` | `[]` |
#' | `NULL` inside a list | `null` (`{}` with `mcplite.json.null = "list"`) |
#' | `list(a = 1, b = "x")` | `{"a":1,"b":"x"}` |
#' | `list(1, "x")` | `[1,"x"]` |
#' | `factor("lo")` | `"lo"` |
#' | `as.Date("2025-01-31")` | `"2025-01-31"` |
#' | `as.POSIXct("2025-01-31 12:00:00", tz = "UTC")` | `"2025-01-31 12:00:00"` |
#' | `matrix(1:4, 2)` | `[[1,3],[2,4]]` (row by row) |
#' | `data.frame(x = 1:2, y = c("a", NA))` | `[{"x":1,"y":"a"},{"x":2}]` (one object per row; missing cells left out) |
#' | `I(5)`, `jsonlite::unbox(c(a = 1))` | `[5]`, `1` |
#' | `as.raw(1:3)` | `"AQID"` (base64) |
#' | `complex(real = 1, imaginary = 2)` | `"1+2i"` |
#' | a string of class `json` | the string itself, never raw JSON |
#'
#' ellmer content objects are converted rather than written as JSON:
#' `ContentText` becomes a text block and `ContentImageInline` an image block
#' (alone or in a list, which may also hold mcplite blocks), and a
#' `ContentToolResult` stands for its value, or for a tool error with its
#' error message. Other ellmer content classes are a tool error naming the
#' `content_*()` constructor to use instead.
#'
#' Environments, functions, external pointers, S4 objects, language objects
#' and classes jsonlite has no method for are refused: [tool_result()] raises an
#' error of class `mcplite_error_serialize` when the result is built, and an
#' ordinary return value of that kind becomes a tool error the client sees.
#'
#' @section Differences from jsonlite:
#' The serializer is mcplite's own (in Rust), tested byte for byte against
#' jsonlite's `toJSON()` on thousands of values and option combinations. The
#' known differences are deliberate:
#' * functions are refused, where jsonlite writes their source code;
#' * pairlists are refused like other language objects, where jsonlite turns
#'   them into lists;
#' * complex numbers with `mcplite.json.digits = NA` keep 15 significant
#'   digits, where jsonlite fails;
#' * `integer64`, `sf` and `blob` values are not mapped (an error), where
#'   jsonlite has methods for them.
#'
#' @section Payload options:
#' Three global options, plus one for number formatting, change how payloads
#' (ordinary return values and structured content, including the generated
#' text copy) are written. Schemas, annotations and all `meta` fields are not
#' affected: they always use a fixed encoding. Set the options before building
#' results and starting the server, and leave them alone while it runs.
#' Setting an option to `NULL` restores its default.
#'
#' * `mcplite.json.null`: `"null"` (default) writes `NULL` list elements as
#'   JSON `null`; `"list"` writes them as `{}`. Either way the field is kept.
#' * `mcplite.json.na`: unset by default, which keeps jsonlite's own choice for
#'   each type of vector. `"null"` writes missing values (and `NaN`, `Inf`)
#'   as `null` and keeps missing data-frame cells; `"string"` writes them as
#'   strings such as `"NA"`.
#' * `mcplite.json.auto_unbox`: `TRUE` (default) writes length-one vectors as
#'   scalars; `FALSE` writes them as one-element arrays. [I()] and
#'   `jsonlite::unbox()` are honoured either way.
#' * `mcplite.json.digits`: how many decimal places numbers keep, 4 by default
#'   as in jsonlite; `I(n)` asks for `n` significant digits instead and `NA`
#'   for full precision.
#'
#' An invalid value for any of these is reported as an error of class
#' `mcplite_error_option` when a result is built or the server starts.
#'
#' @seealso [tool_result()], [content_text()], [mcp_server()]
#' @examples
#' local({
#'   old <- options(mcplite.json.na = "null", mcplite.json.auto_unbox = FALSE)
#'   on.exit(options(old))
#'   res <- tool_result(structured_content = list(
#'     total = 3L,
#'     scores = c(1.5, NA, Inf)
#'   ))
#'   res$content[[1]]$text
#' })
#' @name mcplite-results
NULL
