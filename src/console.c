// The console guard of a call in the user's live session (R/console-guard.R):
// while it is on, anything that would read a line from R's console (readline(),
// menu(), browser(), scan() and readLines() on the console, a prompt of
// install.packages()) fails with an R error instead of waiting for the user.
//
// Every such read goes through the front end's ReadConsole, which R's Unix
// interface lets a front end replace (Rinterface.h: terminal R, RStudio and
// Positron all set it). This function runs inside R (called by R's C code,
// never by Rust), so its R error is an ordinary one.
//
// The first read of a call fails with an R error; later ones see end of
// input. An error at a browser() prompt does not leave the browser (its own
// read-eval loop prints it and reads again): end of input does. The guard
// counts the reads it refused, and the call becomes a tool error.
//
// Windows front ends give R their ReadConsole at start-up only: there the
// guard cannot swap it and returns 0 (see console-guard.R's docs).
#include <R.h>
#include <Rinternals.h>

#ifndef _WIN32
#define R_INTERFACE_PTRS
#include <Rinterface.h>

static int (*saved_read_console)(const char *, unsigned char *, int, int) = NULL;
static int refused_reads = 0;

static int refuse_console_read(const char *prompt, unsigned char *buf, int len, int hist) {
  (void) buf;
  (void) len;
  (void) hist;
  if (refused_reads++ == 0) {
    Rf_error("An MCP tool cannot read from the R console (prompt \"%.60s\").", prompt ? prompt : "");
  }
  return 0;
}

// How many reads were refused since the last call; resets the count.
int mcplite_console_reads_refused(void) {
  int n = refused_reads;
  refused_reads = 0;
  return n;
}

// on = 1: console reads fail; on = 0: the front end's reader is back.
// Returns 1 if it changed anything.
int mcplite_console_reads_fail(int on) {
  if (on) {
    if (saved_read_console != NULL || ptr_R_ReadConsole == NULL) return 0;
    saved_read_console = ptr_R_ReadConsole;
    ptr_R_ReadConsole = refuse_console_read;
    return 1;
  }
  if (saved_read_console == NULL) return 0;
  ptr_R_ReadConsole = saved_read_console;
  saved_read_console = NULL;
  return 1;
}
#else
int mcplite_console_reads_fail(int on) {
  (void) on;
  return 0;
}

int mcplite_console_reads_refused(void) {
  return 0;
}
#endif
