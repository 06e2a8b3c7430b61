/* A C program of another project, built with `pkg-config --cflags --libs
 * rockdoc` against the installed shared library (run_install_test.cmake). */
#include <stdio.h>

#include <rockdoc/c.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  rockdoc_client_t* db = rockdoc_open(argv[1], NULL, &err);
  if (db == NULL) {
    fprintf(stderr, "open: %d %s\n", err.code, err.message);
    rockdoc_error_clear(&err);
    return 1;
  }
  /* {ping: 1} */
  static const unsigned char ping[] = {15, 0, 0, 0, 0x10, 'p', 'i', 'n', 'g', 0, 1, 0, 0, 0, 0};
  unsigned char* reply = NULL;
  size_t reply_len = 0;
  int ok = rockdoc_run_command(db, "test", ping, sizeof ping, &reply, &reply_len, &err);
  rockdoc_free(reply);
  if (!rockdoc_close(db, &err) || !ok) {
    fprintf(stderr, "%d %s\n", err.code, err.message);
    rockdoc_error_clear(&err);
    return 1;
  }
  printf("rockdoc C consumer ok (%s)\n", rockdoc_version());
  return 0;
}
