# A server whose tool draws a base R plot and returns it as a PNG image.
#
#   Rscript --vanilla /absolute/path/to/plot-image.R
#
# MCP carries images as base64 text. mcplite does not encode for you, so the
# tool reads the PNG file back as raw bytes and encodes them itself: with
# jsonlite when it is installed, otherwise with the small base R encoder below.

base64_encode <- function(bytes) {
  if (requireNamespace("jsonlite", quietly = TRUE)) {
    # base64_enc() wraps its output every 76 characters; MCP wants one string.
    return(gsub("\n", "", jsonlite::base64_enc(bytes), fixed = TRUE))
  }
  alphabet <- c(LETTERS, letters, 0:9, "+", "/")
  n <- length(bytes)
  if (n == 0) {
    return("")
  }
  pad <- (3 - n %% 3) %% 3
  m <- matrix(c(as.integer(bytes), integer(pad)), nrow = 3)
  # Three bytes make one 24-bit number, which splits into four 6-bit digits.
  v <- m[1, ] * 65536 + m[2, ] * 256 + m[3, ]
  digits <- rbind(v %/% 262144, (v %/% 4096) %% 64, (v %/% 64) %% 64, v %% 64)
  chars <- alphabet[as.vector(digits) + 1]
  if (pad > 0) {
    chars[seq(length(chars) - pad + 1, length(chars))] <- "="
  }
  paste(chars, collapse = "")
}

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
    path <- tempfile(fileext = ".png")
    on.exit(unlink(path), add = TRUE)
    # Draw into a file, never to a screen device: this process has no display
    # and its standard output belongs to the protocol.
    type <- if (isTRUE(capabilities("cairo"))) "cairo" else getOption("bitmapType")
    grDevices::png(path, width = 480, height = 360, type = type)
    tryCatch(
      graphics::hist(stats::rnorm(n), breaks = bins, col = "grey80",
                     main = sprintf("%d draws from N(0, 1)", n), xlab = "value"),
      finally = grDevices::dev.off()
    )
    bytes <- readBin(path, "raw", n = file.size(path))
    mcplite::tool_result(list(
      mcplite::content_text(sprintf("Histogram of %d normal draws in %d bins.", n, bins)),
      mcplite::content_image(base64_encode(bytes), mime_type = "image/png")
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
