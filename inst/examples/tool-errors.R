# A server showing the three ways a tool reports a problem to the client.
#
#   Rscript --vanilla /absolute/path/to/tool-errors.R
#
# In every case the client receives a normal tool result with `isError: true`,
# and the server keeps running.

# 1. An R error: mcplite catches it and sends its message as a tool error.
always_fails <- mcplite::tool(
  function() {
    stop("This tool always fails.", call. = FALSE)
  },
  name = "always_fails",
  description = "Signal an R error, to show how errors reach the client."
)

# 2. An explicit tool error built with tool_result().
lookup_colour <- mcplite::tool(
  function(name) {
    known <- c(red = "#FF0000", green = "#00FF00", blue = "#0000FF")
    if (!name %in% names(known)) {
      return(mcplite::tool_result(
        mcplite::content_text(paste0(
          "Unknown colour '", name, "'. Try one of: ",
          paste(names(known), collapse = ", "), "."
        )),
        is_error = TRUE
      ))
    }
    known[[name]]
  },
  name = "lookup_colour",
  description = "Return the hex code of a primary colour.",
  arguments = list(name = mcplite::type_string("Colour name: red, green or blue."))
)

# 3. Input validation: the schema describes the argument, but checking the
# value is the tool's job.
square_root <- mcplite::tool(
  function(x) {
    if (!is.numeric(x) || length(x) != 1 || is.na(x)) {
      stop("`x` must be a single number.", call. = FALSE)
    }
    if (x < 0) {
      stop("`x` must not be negative.", call. = FALSE)
    }
    sqrt(x)
  },
  name = "square_root",
  description = "Square root of a non-negative number.",
  arguments = list(x = mcplite::type_number("A number greater than or equal to zero."))
)

mcplite::mcp_server(list(always_fails, lookup_colour, square_root))
