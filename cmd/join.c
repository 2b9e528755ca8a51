/* SPDX-License-Identifier: MIT */
/* colltune join: several sweeps' configs (one shape each) as one, for exports that carry a
 * section per rank count. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../lib/file.h"
#include "../output/config.h"
#include "cmd.h"

/* "on 2, 4 ranks" of sets (n): each rank count once, in the order met */
static const char *ranks_str(const struct ct_ruleset *sets, int n, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "on");
    for (int i = 0; i < n && o < len; i++) {
        int j = 0;
        while (j < i && sets[j].nranks != sets[i].nranks)
            j++;
        if (j == i)
            o += (size_t)snprintf(buf + o, len - o, "%s %d", o > 2 ? "," : "", sets[i].nranks);
    }
    if (o < len)
        snprintf(buf + o, len - o, " ranks");
    return buf;
}

int cmd_join(int argc, char **argv)
{
    static const struct option lo[] = {{"out", 1, 0, 'o'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    const char *out = NULL;
    optind = 1;
    for (int c, li = 0; (c = getopt_long(argc, argv, ":o:h", lo, &li)) != -1;) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'h': fputs(ct_help_join, stdout); return CT_EXIT_OK;
        case ':':
            return ct_cmd_fail("join", CT_EXIT_USAGE, "option '%s' needs a value",
                               argv[optind - 1]);
        default: return ct_cmd_bad_option("join", lo, argv[optind - 1]);
        }
    }
    int n = argc - optind;
    if (n < 2)
        return ct_cmd_fail("join", CT_EXIT_USAGE,
                           "two configs or more to join, %d given (colltune join CONFIG CONFIG... "
                           "--out FILE)",
                           n);
    if (!out)
        return ct_cmd_fail("join", CT_EXIT_USAGE, "--out FILE: where to write the joined config");
    CT_TRY_OPT(ct_cmd_out_check("join", "out", out, false));
    struct ct_config c;
    struct ct_err err = {0};
    if (ct_file_check_regular(out, &err) < 0) /* a FIFO without a reader hung the write */
        return ct_cmd_fail("join", CT_EXIT_USAGE, "--out: %s", err.msg);
    if (ct_config_join_files((const char *const *)argv + optind, n, out, &c, &err) < 0)
        return ct_cmd_fail("join", err.code == CT_EINVAL ? CT_EXIT_USAGE : CT_EXIT_FAIL, "%s",
                           err.msg);
    char b[256];
    printf("wrote %s, %d configs joined:\n", out, n);
    if (c.nsets)
        printf("  colltune's own rules: %d set%s %s\n", c.nsets, c.nsets == 1 ? "" : "s",
               ranks_str(c.sets, c.nsets, b, sizeof b));
    for (int l = 0; l < c.nlibs; l++)
        if (c.libs[l].raw) /* NCCL's: in its plugin's words */
            printf("  %s %s: its section as written\n", c.libs[l].name, c.libs[l].version);
        else
            printf("  %s %s: %d set%s %s\n", c.libs[l].name, c.libs[l].version, c.libs[l].nsets,
                   c.libs[l].nsets == 1 ? "" : "s",
                   ranks_str(c.libs[l].sets, c.libs[l].nsets, b, sizeof b));
    ct_config_release(&c);
    return CT_EXIT_OK;
}
