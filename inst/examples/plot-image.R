# A server whose tool draws a base R plot and returns it as a PNG image.
#
#   Rscript --vanilla /absolute/path/to/plot-image.R
#
# mcplite::plot_image() draws into a PNG file (never on a screen: the server
# has none, and its standard output belongs to the protocol), closes the
# device even when drawing fails, and returns the image content block with
# the PNG encoded as base64. It takes a ggplot, a recorded plot, a function,
# or, as here, an expression that draws.

plot_histogram <- mcplite::tool(
  function(n = 100, bins = 20) {
    n <- as.integer(n)
    bins <- as.integer(bins)
    if (is.na(n) || n < 1 || n > 1e5) {
      stop("`n` must be between 1 and 100000.", call. = FALSE)
    }
    if (is.na(bins) || bins < 1 || bins > 200) {
      stop("`bins` must be between 1 and 200.", call. = FALSE)
    }
    image <- mcplite::plot_image(
      graphics::hist(stats::rnorm(n), breaks = bins, col = "grey80",
                     main = sprintf("%d draws from N(0, 1)", n), xlab = "value"),
      width = 480, height = 360
    )
    mcplite::tool_result(list(
      mcplite::content_text(sprintf("Histogram of %d normal draws in %d bins.", n, bins)),
      image
    ))
  },
  name = "plot_histogram",
  description = "Draw a histogram of random normal numbers and return it as a PNG image.",
  arguments = list(
    n = mcplite::type_integer("How many numbers to draw (default 100).", required = FALSE),
    bins = mcplite::type_integer("Approximate number of bins (default 20).", required = FALSE)
  )
)

mcplite::mcp_server(plot_histogram)
