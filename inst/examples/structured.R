# A server whose tool returns structured content described by an output schema.
#
#   Rscript --vanilla /absolute/path/to/structured.R
#
# Clients that understand structured output receive the object under
# `structuredContent`; every client also receives the same data as JSON text.

summarise_numbers <- mcplite::tool(
  function(values) {
    # JSON arrays arrive as R lists: turn them into a numeric vector first.
    x <- as.numeric(unlist(values))
    if (length(x) == 0 || anyNA(x)) {
      return(mcplite::tool_result(
        mcplite::content_text("`values` must be a non-empty array of numbers."),
        is_error = TRUE
      ))
    }
    mcplite::tool_result(structured_content = list(
      n = length(x),
      mean = mean(x),
      min = min(x),
      max = max(x)
    ))
  },
  name = "summarise_numbers",
  description = "Count, mean, minimum and maximum of a list of numbers.",
  arguments = list(
    values = mcplite::type_array(
      mcplite::type_number(),
      description = "The numbers to summarise."
    )
  ),
  output_schema = mcplite::type_object(
    .description = "Summary statistics.",
    n = mcplite::type_integer("How many numbers were given."),
    mean = mcplite::type_number("Arithmetic mean."),
    min = mcplite::type_number("Smallest value."),
    max = mcplite::type_number("Largest value.")
  )
)

mcplite::mcp_server(summarise_numbers)
