/* SPDX-License-Identifier: MIT */
/*
 * The sweep report writer: points.csv (header, one record per point, RFC 4180 quoting) and
 * report.html (balanced tags checked by python3's html.parser, one <svg> per collective,
 * legend, crossover labels, escaping of hostile names) plus the edge cases and errors.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/file.h"
#include "output/report.h"

#define CSV_HEADER                                                                                 \
    "coll,algo,chunk,pipeline,channels,streams,threads,inflight,intra,inter,size,count,median_us,"                 \
    "ci_lo_us,ci_hi_us,samples,converged,busbw_GBps,pruned"
#define CSV_COLS 19

/* ---- fixture: a synthetic sweep -------------------------------------------------------- */

struct fix {
    struct ct_config cfg;
    struct ct_sweep_point *pts;
    size_t n, cap;
    struct ct_ruleset sets[2];
    struct ct_rule rules[4];
    char dir[64];
};

static struct ct_sweep_point *add(struct fix *f, enum ct_coll c, const char *algo, uint64_t size,
                                  uint64_t chunk, double t_us)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->pts = realloc(f->pts, f->cap * sizeof *f->pts);
        cr_assert_not_null(f->pts);
    }
    struct ct_sweep_point *p = &f->pts[f->n++];
    memset(p, 0, sizeof *p);
    p->coll = c;
    snprintf(p->algo, sizeof p->algo, "%s", algo);
    p->params.v[CT_P_CHUNK] = chunk;
    p->params.v[CT_P_PIPELINE] = 4;
    p->params.v[CT_P_CHANNELS] = 1;
    p->params.v[CT_P_STREAMS] = 1;
    p->params.v[CT_P_THREADS] = 1;
    p->size = size;
    p->count = size / 4;
    p->st = (struct ct_stats){.n = 30,
                              .median = t_us,
                              .lo = t_us * 0.98,
                              .hi = t_us * 1.03,
                              .converged = true,
                              .spent_s = 0.01};
    p->busbw = t_us > 0 ? (double)size / (t_us * 1e3) * 1.5 : 0;
    return p;
}

static void rule(struct ct_rule *r, uint64_t lo, uint64_t hi, const char *algo, bool tie)
{
    memset(r, 0, sizeof *r);
    r->min_bytes = lo;
    r->max_bytes = hi;
    snprintf(r->algo, sizeof r->algo, "%s", algo);
    r->params.v[CT_P_CHUNK] = 65536;
    r->params.v[CT_P_PIPELINE] = 4;
    r->confidence = tie ? 0.5 : 0.95;
    r->tie = tie;
    snprintf(r->runner_up, sizeof r->runner_up, "rdh");
    r->gain = tie ? 1.02 : 1.4;
}

/* allreduce: ring, rdh, mesh-1step crossing (rules at 4 KiB and 50000 B); allgather: ring only. */
static void fix_init(struct fix *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/ct-report-XXXXXX");
    cr_assert_not_null(mkdtemp(f->dir));
    struct ct_config *c = &f->cfg;
    snprintf(c->version, sizeof c->version, "0.1.0-test");
    snprintf(c->date, sizeof c->date, "2026-01-02T03:04:05Z");
    c->fp =
        (struct ct_fingerprint){.hosts = 1, .ranks_per_host = 4, .nranks = 4, .nics_per_host = 1};
    snprintf(c->fp.host, sizeof c->fp.host, "a&b\"c'<d>");
    snprintf(c->fp.transport, sizeof c->fp.transport, "shm");
    c->sweep = (struct ct_sweep_settings){.minbytes = 8,
                                          .maxbytes = 1 << 20,
                                          .stepfactor = 4,
                                          .budget_s = 60,
                                          .target_ci = 0.05,
                                          .margin = 0.05,
                                          .min_iters = 5,
                                          .max_iters = 100,
                                          .warmup = 2,
                                          .points = 60,
                                          .full_points = 120,
                                          .elapsed_s = 3};
    snprintf(c->sweep.search, sizeof c->sweep.search, "coordinate descent");
    for (uint64_t s = 8; s <= (1u << 20); s *= 4)
        for (int k = 0; k < 2; k++) {
            uint64_t chunk = k ? 16384 : 65536;
            double slow = (k == 1) == (s < 16384) ? 1.05 : 1.0; /* 16K wins from 16 KiB */
            add(f, CT_ALLREDUCE, "ring", s, chunk, (20 + s / 5.3e3) * slow);
            add(f, CT_ALLREDUCE, "rdh", s, chunk, (10 + s / 4.0e3) * slow);
            add(f, CT_ALLREDUCE, "mesh-1step", s, chunk, (4 + s / 1.0e3) * slow)->pruned =
                s > 65536;
            add(f, CT_ALLGATHER, "ring", s, chunk, (15 + s / 6e3) * slow);
        }
    rule(&f->rules[0], 0, 4096, "mesh-1step", false);
    rule(&f->rules[1], 4096, 50000, "rdh", false);
    rule(&f->rules[2], 50000, CT_BYTES_INF, "ring", true);
    rule(&f->rules[3], 0, CT_BYTES_INF, "ring", false);
    f->sets[0] = (struct ct_ruleset){.coll = CT_ALLREDUCE,
                                     .nnodes = 1,
                                     .ranks_per_node = 4,
                                     .nranks = 4,
                                     .dtype = CT_FLOAT32,
                                     .op = CT_SUM,
                                     .rules = f->rules,
                                     .nrules = 3};
    f->sets[1] = (struct ct_ruleset){.coll = CT_ALLGATHER,
                                     .nnodes = 1,
                                     .ranks_per_node = 4,
                                     .nranks = 4,
                                     .dtype = CT_FLOAT32,
                                     .op = CT_SUM,
                                     .rules = f->rules + 3,
                                     .nrules = 1};
    c->sets = f->sets;
    c->nsets = 2;
}

static void rm(const char *dir, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

static void fix_fini(struct fix *f)
{
    rm(f->dir, "points.csv");
    rm(f->dir, "report.html");
    rm(f->dir, "check.py");
    rmdir(f->dir);
    free(f->pts);
}

static char *slurp(const char *dir, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *data = NULL;
    size_t len = 0;
    struct ct_err err = {0};
    cr_assert_eq(ct_file_read(path, &data, &len, &err), 0, "%s", err.msg);
    cr_assert_eq(strlen(data), len, "%s holds a NUL byte", name);
    return data;
}

static void write_report(struct fix *f, const struct ct_config *cfg)
{
    struct ct_err err = {0};
    int rc = ct_report_write(f->dir, cfg, f->pts, f->n, &err);
    cr_assert_eq(rc, 0, "ct_report_write: %s", err.msg);
}

/* ---- checks ---------------------------------------------------------------------------- */

/* RFC 4180 reader: splits s in place into records of fields; returns the record count. */
#define MAXREC 512
#define MAXFIELD 32
struct csv {
    char *f[MAXREC][MAXFIELD];
    int nf[MAXREC];
};

static int csv_parse(struct csv *c, char *s)
{
    int nrec = 0;
    while (*s && nrec < MAXREC) {
        int nf = 0;
        for (;;) {
            char *out = s, *start = s;
            if (*s == '"') {
                s++;
                for (;;) {
                    cr_assert_neq(*s, '\0', "unterminated quoted field");
                    if (*s == '"' && s[1] == '"') {
                        *out++ = '"';
                        s += 2;
                    } else if (*s == '"') {
                        s++;
                        break;
                    } else {
                        *out++ = *s++;
                    }
                }
                cr_assert(*s == ',' || *s == '\n', "garbage after a quoted field");
            } else {
                while (*s && *s != ',' && *s != '\n') {
                    cr_assert_neq(*s, '"', "bare quote in an unquoted field");
                    out++;
                    s++;
                }
            }
            char sep = *s;
            *out = '\0';
            if (nf < MAXFIELD)
                c->f[nrec][nf++] = start;
            if (sep == ',') {
                s++;
                continue;
            }
            if (sep == '\n')
                s++;
            break;
        }
        c->nf[nrec++] = nf;
    }
    return nrec;
}

/* Is there an element with class="cls" whose text is exactly text? */
static bool has_text(const char *html, const char *cls, const char *text)
{
    char key[64];
    snprintf(key, sizeof key, "class=\"%s\"", cls);
    size_t tl = strlen(text);
    for (const char *p = strstr(html, key); p; p = strstr(p + 1, key)) {
        const char *gt = strchr(p, '>');
        if (gt && !strncmp(gt + 1, text, tl) && gt[1 + tl] == '<')
            return true;
    }
    return false;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static const char checker[] =
    "import sys\n"
    "from html.parser import HTMLParser\n"
    "VOID = {'area','base','br','col','embed','hr','img','input','link','meta','source',\n"
    "        'track','wbr'}\n"
    "BAD = {'script','iframe','object','embed','img','link'}\n"
    "class P(HTMLParser):\n"
    "    def __init__(s):\n"
    "        super().__init__(convert_charrefs=True); s.stack = []; s.err = []; s.svgs = 0\n"
    "    def attrs(s, tag, attrs):\n"
    "        if tag in BAD: s.err.append('forbidden <%s>' % tag)\n"
    "        if tag == 'svg': s.svgs += 1\n"
    "        for k, v in attrs:\n"
    "            v = v or ''\n"
    "            if k.startswith('on') or k == 'src': s.err.append('attribute %s=%s' % (k, v))\n"
    "            if 'url(' in v and 'url(#' not in v: s.err.append('external url ' + v)\n"
    "            if k == 'href' and ':' in v: s.err.append('external link ' + v)\n"
    "    def handle_startendtag(s, tag, attrs): s.attrs(tag, attrs)\n"
    "    def handle_starttag(s, tag, attrs):\n"
    "        s.attrs(tag, attrs)\n"
    "        if tag not in VOID: s.stack.append((tag, s.getpos()))\n"
    "    def handle_endtag(s, tag):\n"
    "        if tag in VOID: return\n"
    "        if not s.stack: s.err.append('stray </%s> at %s' % (tag, s.getpos())); return\n"
    "        top, pos = s.stack.pop()\n"
    "        if top != tag: s.err.append('</%s> at %s closes <%s> from %s' %\n"
    "                                    (tag, s.getpos(), top, pos))\n"
    "p = P()\n"
    "p.feed(open(sys.argv[1], encoding='utf-8').read()); p.close()\n"
    "if p.stack: p.err.append('unclosed: %s' % p.stack[:5])\n"
    "if p.svgs != int(sys.argv[2]): p.err.append('%d <svg>, want %s' % (p.svgs, sys.argv[2]))\n"
    "for e in p.err[:10]: print(e, file=sys.stderr)\n"
    "sys.exit(1 if p.err else 0)\n";

/* Parse report.html with python3's html.parser: balanced tags, no script or external
 * resource, valid UTF-8, nsvg <svg> elements. */
static void html_check(const char *dir, int nsvg)
{
    char path[128], cmd[400];
    snprintf(path, sizeof path, "%s/check.py", dir);
    struct ct_err err = {0};
    cr_assert_eq(ct_file_write_atomic(path, checker, strlen(checker), &err), 0, "%s", err.msg);
    snprintf(cmd, sizeof cmd, "python3 %s %s/report.html %d", path, dir, nsvg);
    cr_assert_eq(system(cmd), 0, "html check failed: %s", cmd);
}

/* ---- tests ----------------------------------------------------------------------------- */

Test(report, csv_header_rows_and_quoting)
{
    struct fix f;
    fix_init(&f);
    /* a name with a comma and quotes, a hier-style sub-algorithm with a line break, a NaN */
    struct ct_sweep_point *q = add(&f, CT_ALLREDUCE, "ev,\"il\"", 1024, 4096, 50);
    q->params.intra = "ring\nrdh";
    q->st.median = NAN;
    size_t n = f.n;
    write_report(&f, &f.cfg);
    char *csv = slurp(f.dir, "points.csv");
    cr_assert(!strncmp(csv, CSV_HEADER "\n", strlen(CSV_HEADER) + 1), "header: %.200s", csv);
    cr_assert(strstr(csv, ",\"ev,\"\"il\"\"\",") != NULL, "algo name not quoted per RFC 4180");
    cr_assert(strstr(csv, ",\"ring\nrdh\",") != NULL, "line break not quoted");
    struct csv *c = calloc(1, sizeof *c);
    int nrec = csv_parse(c, csv);
    cr_assert_eq(nrec, (int)n + 1, "%d records for %zu points", nrec, n);
    for (int i = 0; i < nrec; i++)
        cr_assert_eq(c->nf[i], CSV_COLS, "record %d has %d fields", i, c->nf[i]);
    char *(*fields)[MAXFIELD] = c->f;
    /* first point as given */
    cr_assert_str_eq(fields[1][0], "allreduce");
    cr_assert_str_eq(fields[1][1], "ring");
    cr_assert_str_eq(fields[1][2], "65536");
    cr_assert_str_eq(fields[1][10], "8");
    cr_assert_str_eq(fields[1][11], "2");
    cr_assert_str_eq(fields[1][15], "30");
    cr_assert_str_eq(fields[1][16], "1");
    cr_assert_float_eq(strtod(fields[1][12], NULL), 20 + 8 / 5.3e3, 1e-4);
    cr_assert_float_eq(strtod(fields[1][17], NULL), f.pts[0].busbw, 1e-9);
    /* the hostile row round-trips */
    int last = nrec - 1;
    cr_assert_str_eq(fields[last][1], "ev,\"il\"");
    cr_assert_str_eq(fields[last][8], "ring\nrdh");
    cr_assert_str_eq(fields[last][9], "");
    cr_assert_str_eq(fields[last][12], "", "NaN median must be an empty field");
    /* a pruned point */
    int pruned = 0;
    for (int i = 1; i < nrec; i++)
        pruned += !strcmp(fields[i][18], "1");
    cr_assert_eq(pruned, 4, "pruned points in the CSV: %d", pruned);
    free(c);
    free(csv);
    fix_fini(&f);
}

Test(report, html_well_formed_one_svg_per_collective)
{
    struct fix f;
    fix_init(&f);
    write_report(&f, &f.cfg);
    char *html = slurp(f.dir, "report.html");
    cr_assert_eq(count(html, "<svg"), 2);
    cr_assert(strstr(html, "<section id=\"coll-allreduce\">") != NULL);
    cr_assert(strstr(html, "<section id=\"coll-allgather\">") != NULL);
    cr_assert(strstr(html, "<section id=\"coll-alltoall\">") == NULL);
    cr_assert(strstr(html, "<style>") != NULL, "CSS must be inline");
    cr_assert(strstr(html, "Bus bandwidth (GB/s, log scale)") != NULL);
    cr_assert(strstr(html, "Message size (bytes") != NULL);
    /* byte tick labels on the log2 axis */
    cr_assert(has_text(html, "xtick", "1 KiB"));
    cr_assert(has_text(html, "xtick", "256 KiB"));
    cr_assert(has_text(html, "xtick", "16 B"));
    cr_assert(strstr(html, "coordinate descent") != NULL);
    cr_assert(strstr(html, "60, over a full cross product of 120 points (a point may be measured again)") != NULL);
    free(html);
    html_check(f.dir, 2);
    fix_fini(&f);
}

Test(report, html_legend_bands_crossovers_rules)
{
    struct fix f;
    fix_init(&f);
    write_report(&f, &f.cfg);
    char *html = slurp(f.dir, "report.html");
    const char *ar = strstr(html, "<section id=\"coll-allreduce\">");
    const char *ag = strstr(html, "<section id=\"coll-allgather\">");
    cr_assert(ar && ag && ar < ag);
    /* legend: every algorithm of allreduce; allgather's legend has only ring */
    char *agp = (char *)ag;
    *agp = '\0';
    cr_assert(has_text(ar, "lg", "ring"));
    cr_assert(has_text(ar, "lg", "rdh"));
    cr_assert(has_text(ar, "lg", "mesh-1step"));
    cr_assert(has_text(ar, "bandlbl", "mesh-1step"));
    cr_assert(has_text(ar, "bandlbl", "rdh"));
    cr_assert(has_text(ar, "bandlbl", "ring (tie)"));
    /* crossovers at 4096 B and 50000 B, labelled with the threshold */
    cr_assert(has_text(ar, "xo", "4 KiB"));
    cr_assert(has_text(ar, "xo", "48.8 KiB"));
    cr_assert_eq(count(ar, "class=\"xoline\""), 2);
    /* rules table: ranges, exact bytes, tie, confidence */
    cr_assert(strstr(ar, "4 KiB \xe2\x80\x93 48.8 KiB") != NULL);
    cr_assert(strstr(ar, "[4096, 50000)") != NULL);
    cr_assert(strstr(ar, "<span class=\"tie\">tie</span>") != NULL);
    cr_assert(strstr(ar, "95%") != NULL);
    /* winning parameters per size: the chunk row varies, pipeline never does */
    cr_assert(strstr(ar, "Winning parameters per size") != NULL);
    cr_assert(strstr(ar, ">64K</text>") != NULL);
    cr_assert(strstr(ar, ">16K</text>") != NULL);
    cr_assert(strstr(ar, "pipeline=4, channels=1, streams=1, threads=1 at every size") != NULL);
    cr_assert(strstr(ar, "pipeline=4") != NULL);
    *agp = '<';
    cr_assert(has_text(ag, "lg", "ring"));
    cr_assert(!has_text(ag, "lg", "rdh"));
    cr_assert_eq(count(ag, "class=\"xoline\""), 0);
    free(html);
    fix_fini(&f);
}

Test(report, html_escapes_hostile_names)
{
    struct fix f;
    fix_init(&f);
    for (uint64_t s = 8; s <= 4096; s *= 8)
        add(&f, CT_ALLTOALL, "<script>x</script>", s, 4096, 10 + s / 1e3);
    add(&f, CT_ALLTOALL, "a&b \"q\" 'z' \x01\xff", 64, 4096, 12);
    write_report(&f, &f.cfg);
    char *html = slurp(f.dir, "report.html");
    cr_assert(strstr(html, "<script") == NULL, "unescaped <script> in the page");
    cr_assert(strstr(html, "&lt;script&gt;x&lt;/script&gt;") != NULL);
    cr_assert(has_text(html, "lg", "&lt;script&gt;x&lt;/script&gt;"));
    cr_assert(strstr(html, "a&amp;b &quot;q&quot; &#39;z&#39; ?\xef\xbf\xbd") != NULL);
    cr_assert(strstr(html, "a&amp;b&quot;c&#39;&lt;d&gt;") != NULL, "fingerprint host escaped");
    free(html);
    html_check(f.dir, 3);
    fix_fini(&f);
}

Test(report, empty_point_list)
{
    struct fix f;
    fix_init(&f);
    struct ct_config cfg = f.cfg;
    cfg.nsets = 0;
    cfg.sets = NULL;
    struct ct_err err = {0};
    cr_assert_eq(ct_report_write(f.dir, &cfg, NULL, 0, &err), 0, "%s", err.msg);
    char *csv = slurp(f.dir, "points.csv");
    cr_assert_str_eq(csv, CSV_HEADER "\n");
    char *html = slurp(f.dir, "report.html");
    cr_assert(strstr(html, "No points were measured") != NULL);
    cr_assert(strstr(html, "<svg") == NULL);
    free(csv);
    free(html);
    html_check(f.dir, 0);
    /* rules but no points: the rules are still listed, nothing is plotted */
    cr_assert_eq(ct_report_write(f.dir, &f.cfg, NULL, 0, &err), 0, "%s", err.msg);
    html = slurp(f.dir, "report.html");
    cr_assert(strstr(html, "No points were measured for this collective") != NULL);
    cr_assert(strstr(html, "[4096, 50000)") != NULL);
    free(html);
    html_check(f.dir, 0);
    /* no config at all */
    cr_assert_eq(ct_report_write(f.dir, NULL, NULL, 0, &err), 0, "%s", err.msg);
    html_check(f.dir, 0);
    fix_fini(&f);
}

Test(report, edge_cases)
{
    struct fix f;
    fix_init(&f);
    f.n = 0;
    /* one algorithm at a single size */
    add(&f, CT_REDUCESCATTER, "ring", 4096, 4096, 30);
    /* 1 rank: size 0 and busbw 0 everywhere (linear axis), plus NaN and infinity */
    add(&f, CT_ALLTOALL, "mesh", 0, 4096, 3)->busbw = 0;
    add(&f, CT_ALLTOALL, "mesh", 8, 4096, 3)->busbw = 0;
    add(&f, CT_ALLTOALL, "mesh", 64, 4096, 3)->busbw = 0;
    struct ct_sweep_point *p = add(&f, CT_ALLTOALL, "mesh", 512, 4096, NAN);
    p->busbw = NAN;
    p->st.lo = NAN;
    p = add(&f, CT_ALLTOALL, "ring", 512, 4096, INFINITY);
    p->busbw = INFINITY;
    /* only size 0: nothing to plot */
    add(&f, CT_ALLGATHER, "ring", 0, 4096, 2)->busbw = 0;
    /* a name filling its whole field (no NUL) and a collective out of range */
    p = add(&f, CT_ALLREDUCE, "x", 64, 4096, 5);
    memset(p->algo, 'n', sizeof p->algo);
    add(&f, (enum ct_coll)9, "ring", 64, 4096, 5);
    /* rulesets: an empty one, one with NULL rules, one with a zero-width range */
    struct ct_rule rr[2];
    rule(&rr[0], 0, 0, "mesh", false);
    rule(&rr[1], 0, CT_BYTES_INF, "mesh", false);
    rr[1].confidence = NAN;
    rr[1].gain = NAN;
    struct ct_ruleset sets[3] = {
        {.coll = CT_ALLTOALL, 1, 1, 1, CT_FLOAT32, CT_SUM, rr, 2},
        {.coll = CT_ALLGATHER, 1, 1, 1, CT_FLOAT32, CT_SUM, NULL, 3},
        {.coll = CT_REDUCESCATTER, 1, 1, 1, CT_FLOAT32, CT_SUM, rr, 0},
    };
    struct ct_config cfg = f.cfg;
    cfg.sets = sets;
    cfg.nsets = 3;
    cfg.partial = true;
    write_report(&f, &cfg);
    char *html = slurp(f.dir, "report.html");
    cr_assert(strstr(html, "Partial sweep") != NULL);
    cr_assert(strstr(html, "No point with a positive message size to plot") != NULL);
    char whole[sizeof p->algo + 32], ns[sizeof p->algo + 1];
    memset(ns, 'n', sizeof p->algo);
    ns[sizeof p->algo] = 0;
    snprintf(whole, sizeof whole, "\xe2\x80\xa6<title>%s</title>", ns);
    cr_assert(strstr(html, whole) != NULL,
              "a long name is shortened in the legend and given whole on hover");
    const char *a2a = strstr(html, "<section id=\"coll-alltoall\">");
    cr_assert_not_null(a2a);
    cr_assert(strstr(a2a, "Bus bandwidth (GB/s)</text>") != NULL, "all-zero busbw: linear axis");
    cr_assert(strstr(html, "nan") == NULL && strstr(html, "inf ") == NULL,
              "non-finite numbers must not be printed raw");
    free(html);
    /* sections: allreduce, allgather (no svg: only size 0 -> note svg), reducescatter,
     * alltoall */
    html_check(f.dir, 4);
    char *csv = slurp(f.dir, "points.csv");
    cr_assert(strstr(csv, "\n?,ring,") != NULL, "collective out of range");
    struct csv *c = calloc(1, sizeof *c);
    cr_assert_eq(csv_parse(c, csv), (int)f.n + 1);
    free(c);
    free(csv);
    /* the same with no config */
    write_report(&f, NULL);
    html_check(f.dir, 4);
    fix_fini(&f);
}

Test(report, deterministic)
{
    struct fix f;
    fix_init(&f);
    write_report(&f, &f.cfg);
    char *a = slurp(f.dir, "report.html"), *ca = slurp(f.dir, "points.csv");
    write_report(&f, &f.cfg);
    char *b = slurp(f.dir, "report.html"), *cb = slurp(f.dir, "points.csv");
    cr_assert_str_eq(a, b);
    cr_assert_str_eq(ca, cb);
    free(a);
    free(b);
    free(ca);
    free(cb);
    fix_fini(&f);
}

Test(report, errors)
{
    struct fix f;
    fix_init(&f);
    struct ct_err err = {0};
    cr_assert_eq(ct_report_write("/nonexistent/ct-report", &f.cfg, f.pts, f.n, &err), CT_EIO);
    cr_assert(strstr(err.msg, "/nonexistent/ct-report/points.csv") != NULL, "%s", err.msg);
    cr_assert_eq(ct_report_write(NULL, &f.cfg, f.pts, f.n, &err), CT_EINVAL);
    cr_assert_eq(ct_report_write(f.dir, &f.cfg, NULL, 3, &err), CT_EINVAL);
    /* a trailing slash on the folder is fine */
    char dir[80];
    snprintf(dir, sizeof dir, "%s/", f.dir);
    cr_assert_eq(ct_report_write(dir, &f.cfg, f.pts, f.n, &err), 0, "%s", err.msg);
    fix_fini(&f);
}
