/* SPDX-License-Identifier: MIT */
/* A small tolerant XML reader for topology files: elements and attributes into a tree;
 * comments, declarations, CDATA and text are skipped. Malformed input gives "line N: ...". */
#include "probe_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define XML_MAX_DEPTH 256

struct xp {
    const char *s, *end;
    int line;
    struct ct_err *err;
};

static int fail(struct xp *x, const char *what)
{
    return ct_err_set(x->err, CT_EINVAL, "line %d: %s", x->line, what);
}

static void adv(struct xp *x, size_t n)
{
    for (size_t i = 0; i < n && x->s < x->end; i++, x->s++)
        if (*x->s == '\n')
            x->line++;
}

static int starts(const struct xp *x, const char *lit)
{
    size_t n = strlen(lit);
    return (size_t)(x->end - x->s) >= n && !memcmp(x->s, lit, n);
}

/* Skip to just after lit; error with what when the input ends first. */
static int skip_past(struct xp *x, const char *lit, const char *what)
{
    while (x->s < x->end) {
        if (starts(x, lit)) {
            adv(x, strlen(lit));
            return 0;
        }
        adv(x, 1);
    }
    return ct_err_set(x->err, CT_EINVAL, "unexpected end of input in %s", what);
}

static void skip_ws(struct xp *x)
{
    while (x->s < x->end && isspace((unsigned char)*x->s))
        adv(x, 1);
}

static int name_char(int c, int first)
{
    return isalpha(c) || c == '_' || c == ':' || (!first && (isdigit(c) || c == '-' || c == '.'));
}

static char *read_name(struct xp *x)
{
    const char *b = x->s;
    while (x->s < x->end && name_char((unsigned char)*x->s, x->s == b))
        x->s++;
    if (x->s == b)
        return NULL;
    char *n = ct_xmalloc((size_t)(x->s - b) + 1);
    memcpy(n, b, (size_t)(x->s - b));
    n[x->s - b] = 0;
    return n;
}

/* Decode the predefined and numeric entities in place; unknown ones stay as they are. */
static void decode_entities(char *v)
{
    static const struct {
        const char *e;
        char c;
    } ent[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    char *w = v;
    for (char *r = v; *r;) {
        int done = 0;
        for (size_t i = 0; *r == '&' && i < sizeof ent / sizeof ent[0]; i++) {
            size_t n = strlen(ent[i].e);
            if (!strncmp(r, ent[i].e, n)) {
                *w++ = ent[i].c;
                r += n;
                done = 1;
                break;
            }
        }
        if (!done && r[0] == '&' && r[1] == '#') {
            char *end;
            long c = r[2] == 'x' ? strtol(r + 3, &end, 16) : strtol(r + 2, &end, 10);
            if (*end == ';' && c > 0 && c < 128) {
                *w++ = (char)c;
                r = end + 1;
                done = 1;
            }
        }
        if (!done)
            *w++ = *r++;
    }
    *w = 0;
}

static int read_attrs(struct xp *x, struct ct_xml *e, int *self_close)
{
    for (;;) {
        skip_ws(x);
        if (x->s >= x->end)
            return ct_err_set(x->err, CT_EINVAL, "unexpected end of input in <%s> (line %d)",
                              e->name, e->line);
        if (*x->s == '>') {
            adv(x, 1);
            return 0;
        }
        if (starts(x, "/>")) {
            adv(x, 2);
            *self_close = 1;
            return 0;
        }
        char *name = read_name(x);
        if (!name)
            return fail(x, "bad character in tag");
        skip_ws(x);
        if (x->s >= x->end || *x->s != '=') {
            free(name);
            return fail(x, "attribute without '=value'");
        }
        adv(x, 1);
        skip_ws(x);
        char q = x->s < x->end ? *x->s : 0;
        if (q != '"' && q != '\'') {
            free(name);
            return fail(x, "attribute value without quotes");
        }
        adv(x, 1);
        const char *b = x->s;
        while (x->s < x->end && *x->s != q && *x->s != '<')
            adv(x, 1);
        if (x->s >= x->end || *x->s != q) {
            free(name);
            return fail(x, "unterminated attribute value");
        }
        e->attr = ct_xrealloc(e->attr, (e->n_attr + 1) * sizeof *e->attr);
        char *v = ct_xmalloc((size_t)(x->s - b) + 1);
        memcpy(v, b, (size_t)(x->s - b));
        v[x->s - b] = 0;
        decode_entities(v);
        e->attr[e->n_attr++] = (struct ct_xml_attr){name, v};
        adv(x, 1);
    }
}

static void add_kid(struct ct_xml *p, struct ct_xml *k)
{
    p->kid = ct_xrealloc(p->kid, (p->n_kid + 1) * sizeof *p->kid);
    p->kid[p->n_kid++] = k;
}

/* Markup that is not an element: comment, declaration, processing instruction, CDATA. */
static int skip_markup(struct xp *x, int *skipped)
{
    *skipped = 1;
    if (starts(x, "<!--"))
        return skip_past(x, "-->", "a comment");
    if (starts(x, "<![CDATA["))
        return skip_past(x, "]]>", "CDATA");
    if (starts(x, "<?"))
        return skip_past(x, "?>", "a processing instruction");
    if (starts(x, "<!"))
        return skip_past(x, ">", "a declaration");
    *skipped = 0;
    return 0;
}

static int close_tag(struct xp *x, struct ct_xml **stack, int *depth)
{
    adv(x, 2);
    char *name = read_name(x);
    skip_ws(x);
    int rc = 0;
    if (!name || x->s >= x->end || *x->s != '>')
        rc = fail(x, "malformed end tag");
    else if (*depth <= 1)
        rc = ct_err_set(x->err, CT_EINVAL, "line %d: end tag </%s> without a start tag", x->line,
                        name);
    else if (strcmp(name, stack[*depth - 1]->name))
        rc = ct_err_set(x->err, CT_EINVAL, "line %d: </%s> does not close <%s> (line %d)", x->line,
                        name, stack[*depth - 1]->name, stack[*depth - 1]->line);
    else {
        adv(x, 1);
        (*depth)--;
    }
    free(name);
    return rc;
}

static int open_tag(struct xp *x, struct ct_xml **stack, int *depth)
{
    struct ct_xml *parent = stack[*depth - 1];
    if (*depth == 1 && parent->n_kid)
        return fail(x, "more than one root element");
    if (*depth >= XML_MAX_DEPTH)
        return fail(x, "elements nested too deeply");
    adv(x, 1);
    struct ct_xml *e = ct_xcalloc(1, sizeof *e);
    e->line = x->line;
    e->name = read_name(x);
    add_kid(parent, e);
    if (!e->name)
        return fail(x, "'<' not followed by a tag name");
    int self_close = 0;
    CT_TRY(read_attrs(x, e, &self_close));
    if (!self_close)
        stack[(*depth)++] = e;
    return 0;
}

static int parse_body(struct xp *x, struct ct_xml **stack, int *depth)
{
    while (x->s < x->end) {
        if (*x->s == 0)
            return fail(x, "NUL byte in input");
        if (*x->s != '<') {
            if (*depth == 1 && !isspace((unsigned char)*x->s))
                return fail(x, "text outside the root element");
            adv(x, 1);
            continue;
        }
        int skipped;
        CT_TRY(skip_markup(x, &skipped));
        if (skipped)
            continue;
        if (starts(x, "</"))
            CT_TRY(close_tag(x, stack, depth));
        else
            CT_TRY(open_tag(x, stack, depth));
    }
    return 0;
}

struct ct_xml *ct_xml_parse(const char *buf, size_t len, struct ct_err *err)
{
    struct xp x = {buf, buf + len, 1, err};
    struct ct_xml *doc = ct_xcalloc(1, sizeof *doc);
    struct ct_xml *stack[XML_MAX_DEPTH];
    int depth = 1;
    stack[0] = doc;
    if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
        x.s += 3;
    int rc = parse_body(&x, stack, &depth);
    if (!rc && depth > 1)
        rc = ct_err_set(err, CT_EINVAL, "unexpected end of input: <%s> (line %d) is not closed",
                        stack[depth - 1]->name, stack[depth - 1]->line);
    if (!rc && !doc->n_kid)
        rc = ct_err_set(err, CT_EINVAL, "no XML element found");
    if (rc) {
        ct_xml_free(doc);
        return NULL;
    }
    return doc;
}

void ct_xml_free(struct ct_xml *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->n_kid; i++)
        ct_xml_free(x->kid[i]);
    for (size_t i = 0; i < x->n_attr; i++) {
        free(x->attr[i].name);
        free(x->attr[i].value);
    }
    free(x->kid);
    free(x->attr);
    free(x->name);
    free(x);
}

const char *ct_xml_attr(const struct ct_xml *x, const char *name)
{
    for (size_t i = 0; i < x->n_attr; i++)
        if (!strcmp(x->attr[i].name, name))
            return x->attr[i].value;
    return NULL;
}
