#' Render a plot as an image content block
#'
#' @description
#' `plot_image()` draws a plot into a PNG file and returns it as a
#' [content_image()] block, ready for [tool_result()], so a tool can show a
#' plot to the model (and to the user, in clients that display images).
#'
#' @details
#' `plot` can be:
#'
#' * a ggplot2 plot or a lattice plot;
#' * a plot recorded with [grDevices::recordPlot()];
#' * a grid graphical object (a grob);
#' * a function of no arguments that draws;
#' * an expression that draws, written directly in the call, for example
#'   `plot_image(hist(x))` or `plot_image({plot(x, y); abline(fit)})`. It is
#'   evaluated once the PNG device is open.
#'
#' The PNG comes from [ragg::agg_png()] when ragg is installed (consistent
#' text rendering, no X11 or Cairo needed) and from [grDevices::png()]
#' otherwise. The device is always closed, also when drawing fails, and the
#' device that was active before stays active. The file is encoded to base64
#' by the package's compiled code and deleted.
#'
#' Images cost the model context: a few hundred pixels a side is usually
#' enough.
#'
#' @param plot What to draw; see Details.
#' @param width,height Size of the image in pixels.
#' @param res Resolution in pixels per inch: it sets how large text, symbols
#'   and margins are relative to the image. Lower it for small images.
#' @inheritParams content_image
#'
#' @return A content block of class `mcplite_content_image` with PNG data.
#' @seealso [content_image()], [tool_result()].
#' @export
#' @examples
#' img <- plot_image(plot(1:10), width = 300, height = 200)
#' img$mime_type
#' nchar(img$data)
#'
#' # In a tool:
#' histogram <- tool(
#'   function(n = 100) {
#'     x <- rnorm(n)
#'     tool_result(list(
#'       content_text(sprintf("Histogram of %d normal draws.", n)),
#'       plot_image(hist(x, main = NULL), width = 400, height = 300)
#'     ))
#'   },
#'   name = "histogram",
#'   description = "Draw a histogram of random normal numbers.",
#'   arguments = list(n = type_integer("How many numbers.", required = FALSE))
#' )
#' histogram(50)$content[[2]]$mime_type
plot_image <- function(plot, width = 800, height = 600, res = 96,
                       annotations = list(), meta = list()) {
  call <- sys.call()
  for (arg in c("width", "height", "res")) {
    v <- get(arg)
    if (!is.numeric(v) || length(v) != 1 || is.na(v) || v < 1 || v > 10000) {
      abort_mcplite(sprintf("`%s` must be a number between 1 and 10000, not %s.", arg, describe_value(v)),
                    arg = arg, call = call)
    }
  }
  # `plot` is passed on unevaluated: a drawing expression runs on the device.
  bytes <- render_png(plot, width, height, res, ragg = requireNamespace("ragg", quietly = TRUE), call = call)
  content_image(rust_base64(bytes)$value, "image/png", annotations = annotations, meta = meta)
}

# The PNG bytes of `plot`, drawn with ragg or with the base png() device.
render_png <- function(plot, width, height, res, ragg, call = sys.call(-1)) {
  file <- tempfile("mcplite-plot-", fileext = ".png")
  on.exit(unlink(file), add = TRUE)
  before <- grDevices::dev.cur()
  if (ragg) {
    ragg::agg_png(file, width = width, height = height, res = res, units = "px")
  } else {
    grDevices::png(file, width = width, height = height, res = res, units = "px")
  }
  device <- grDevices::dev.cur()
  on.exit(close_device(device, before), add = TRUE, after = FALSE)
  tryCatch(draw_plot(plot), error = function(e) {
    if (!grepl("figure margins too large", conditionMessage(e), fixed = TRUE)) stop(e)
    abort_mcplite(sprintf(
      "The plot does not fit in %s x %s pixels at %s pixels per inch: R says \"figure margins too large\". Give a larger `width` and `height`, or a smaller `res`.",
      format(width), format(height), format(res)
    ), class = "content", call = call)
  })
  close_device(device, before)
  size <- file.size(file)
  if (is.na(size) || size == 0) {
    abort_mcplite("The graphics device wrote no PNG file.", class = "content", call = call)
  }
  readBin(file, "raw", size)
}

draw_plot <- function(plot) {
  if (is.function(plot)) {
    plot()
  } else if (inherits(plot, "recordedplot")) {
    grDevices::replayPlot(plot)
  } else if (inherits(plot, "grob") || inherits(plot, "gList")) {
    grid::grid.newpage()
    grid::grid.draw(plot)
  } else if (inherits(plot, c("ggplot", "gg", "ggplot2::ggplot", "trellis"))) {
    print(plot)
  }
  # Anything else was an expression that drew as it was evaluated.
  invisible()
}

close_device <- function(device, before) {
  if (device %in% grDevices::dev.list()) {
    grDevices::dev.off(device)
    if (before > 1 && before %in% grDevices::dev.list()) grDevices::dev.set(before)
  }
  invisible()
}
