// The ceiling of the system libcurl's multi interface over HTTP/2, without Swift or PushRelay: N POSTs of 256 bytes,
// C in flight, at most K connections, easy handles reused. Usage: curl-multi-ceiling URL CA_FILE N C K
// Build: cc -O2 -o /tmp/curl-multi-ceiling scripts/bench/curl-multi-ceiling.c -lcurl (see Docs/benchmarks.md).
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static size_t sink(char *p, size_t s, size_t n, void *u) { return s * n; }
static char body[256];
static const char *url; static const char *ca;
static void setup(CURL *e, struct curl_slist *h) {
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_CAINFO, ca);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
  curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 256L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, sink);
}
int main(int argc, char **argv) {
  url = argv[1]; ca = argv[2]; int total = atoi(argv[3]), conc = atoi(argv[4]); long conns = atol(argv[5]);
  memset(body, 'x', sizeof body);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURLM *m = curl_multi_init();
  curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, conns);
  curl_multi_setopt(m, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
  int started = 0, done = 0, running = 0;
  struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
  for (; started < conc && started < total; started++) { CURL *e = curl_easy_init(); setup(e, h); curl_multi_add_handle(m, e); }
  while (done < total) {
    curl_multi_perform(m, &running);
    CURLMsg *msg; int left;
    while ((msg = curl_multi_info_read(m, &left))) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL *e = msg->easy_handle; long code = 0; curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
      if (code != 200) fprintf(stderr, "code %ld result %d\n", code, msg->data.result);
      done++; curl_multi_remove_handle(m, e);
      if (started < total) { started++; curl_multi_add_handle(m, e); } else curl_easy_cleanup(e);
    }
    curl_multi_poll(m, NULL, 0, 1000, NULL);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("%d requests in %.3f s: %.0f req/s\n", total, s, total / s);
  return 0;
}
