/* The C echo floor of bench/throughput.mjs: the limit of the pipes and the
 * driver. Reads stdin in large chunks; for every complete line it answers a
 * fixed, valid tools/call result carrying the request's id, one write() per
 * answer, as a server that answers each request as it comes; with --batch,
 * all the answers to one chunk in one write(). A line without an id gets no
 * answer (notifications). It parses nothing else: no server can be cheaper. */
#include <string.h>
#include <unistd.h>
#include <errno.h>

static char in[1 << 16];
static char out[1 << 20];

static int write_all(const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(1, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int main(int argc, char **argv) {
  int batch = argc > 1 && strcmp(argv[1], "--batch") == 0;
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char tail[] = ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"3\"}],\"isError\":false}}\n";
  size_t have = 0;
  for (;;) {
    ssize_t r = read(0, in + have, sizeof in - have);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    have += (size_t)r;
    size_t start = 0, o = 0;
    for (;;) {
      char *nl = memchr(in + start, '\n', have - start);
      if (!nl) break;
      size_t end = (size_t)(nl - in);
      *nl = 0;
      char *id = strstr(in + start, "\"id\":");
      if (id) {
        id += 5;
        size_t k = strcspn(id, ",}");
        if (o + sizeof head + k + sizeof tail > sizeof out) {
          if (write_all(out, o) < 0) return 1;
          o = 0;
        }
        memcpy(out + o, head, sizeof head - 1); o += sizeof head - 1;
        memcpy(out + o, id, k); o += k;
        memcpy(out + o, tail, sizeof tail - 1); o += sizeof tail - 1;
        if (!batch) {
          if (write_all(out, o) < 0) return 1;
          o = 0;
        }
      }
      start = end + 1;
    }
    if (o && write_all(out, o) < 0) return 1;
    memmove(in, in + start, have - start);
    have -= start;
    if (have == sizeof in) have = 0; /* a line longer than the buffer: dropped */
  }
}
