/* SPDX-License-Identifier: MIT */
/* curses behind struct ct_screen: colours or monochrome styles, key codes, canvas output,
 * and terminal restoration on close, fatal errors and signals. */
#include "screen.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_NCURSES
#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <termios.h>
#include <unistd.h>

static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV,
                             SIGBUS, SIGFPE,  SIGILL, SIGABRT, SIGPIPE};
#define NCAUGHT (sizeof caught / sizeof caught[0])

struct ct_screen {
    SCREEN *scr;
    bool utf8, color;
    attr_t attr[CT_A_COUNT];
    struct sigaction old[NCAUGHT];
};

/* Put the terminal back (close, from the drawing thread: curses' only user). */
static void restore_terminal(void)
{
    if (stdscr && !isendwin())
        endwin();
}

/*
 * What a dying process writes instead, from a signal handler or the fatal hook (set at
 * open, no context needed): the terminal's own strings for what endwin() undoes
 * (attributes, cursor, keypad, alternate screen) and the terminal modes from before curses.
 * Either may run while the TUI's drawing thread is inside curses, where endwin() would
 * share curses' output buffer with that thread's doupdate() (a fatal error's message then
 * came out before the screen was restored: 2 of 110 runs of test_tui): write() and
 * tcsetattr() are async-signal-safe and touch no curses state.
 */
static char sig_restore[256];
static size_t sig_restore_len;
static struct termios sig_modes;
static volatile sig_atomic_t sig_have_modes;

/* Append cap's string without its padding ($<...>, which only curses' output interprets). */
static void sig_restore_add(const char *cap)
{
    const char *v = tigetstr(cap);
    if (!v || v == (const char *)-1)
        return;
    for (; *v && sig_restore_len + 1 < sizeof sig_restore; v++) {
        const char *end = v[0] == '$' && v[1] == '<' ? strchr(v, '>') : NULL;
        if (end)
            v = end;
        else
            sig_restore[sig_restore_len++] = *v;
    }
}

static void restore_dying(void)
{
    if (sig_restore_len) {
        ssize_t w = write(STDOUT_FILENO, sig_restore, sig_restore_len);
        (void)w; /* nothing better to do in a dying process */
    }
    if (sig_have_modes)
        tcsetattr(STDIN_FILENO, TCSADRAIN, &sig_modes);
}

static void on_signal(int sig)
{
    restore_dying();
    raise(sig); /* SA_RESETHAND: now with the default action */
}

/* Colour pairs: foreground, background (-1: the terminal's default), extra attributes. */
static const struct {
    short fg, bg;
    attr_t extra, mono;
} styles[CT_A_COUNT] = {
    [CT_A_NORMAL] = {-1, -1, 0, 0},
    [CT_A_TITLE] = {COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE},
    [CT_A_TAB] = {-1, -1, 0, 0},
    [CT_A_TAB_ON] = {COLOR_BLACK, COLOR_GREEN, A_BOLD, A_REVERSE | A_BOLD},
    [CT_A_HEAD] = {COLOR_BLACK, COLOR_GREEN, 0, A_BOLD | A_UNDERLINE},
    [CT_A_SEL] = {COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE},
    [CT_A_DIM] = {COLOR_BLUE, -1, A_BOLD, A_DIM},
    [CT_A_GOOD] = {COLOR_GREEN, -1, 0, 0},
    [CT_A_WARN] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD},
    [CT_A_BAD] = {COLOR_WHITE, COLOR_RED, A_BOLD, A_BOLD | A_REVERSE},
    [CT_A_KEY] = {COLOR_CYAN, -1, A_BOLD, A_BOLD},
    [CT_A_HEAT0] = {-1, -1, 0, 0},
    [CT_A_HEAT1] = {COLOR_BLUE, -1, 0, 0},
    [CT_A_HEAT2] = {COLOR_GREEN, -1, 0, 0},
    [CT_A_HEAT3] = {COLOR_YELLOW, -1, 0, 0},
    [CT_A_HEAT4] = {COLOR_RED, -1, A_BOLD, A_BOLD},
    [CT_A_SER0] = {COLOR_GREEN, -1, A_BOLD, 0},
    [CT_A_SER1] = {COLOR_YELLOW, -1, A_BOLD, 0},
    [CT_A_SER2] = {COLOR_CYAN, -1, A_BOLD, 0},
    [CT_A_SER3] = {COLOR_MAGENTA, -1, A_BOLD, 0},
    [CT_A_SER4] = {COLOR_RED, -1, A_BOLD, 0},
    [CT_A_SER5] = {COLOR_BLUE, -1, A_BOLD, 0},
};

static void setup_styles(struct ct_screen *s)
{
    const char *nc = getenv("NO_COLOR");
    s->color = !(nc && nc[0]) && has_colors() && start_color() == OK;
    if (s->color)
        use_default_colors();
    for (int a = 0; a < CT_A_COUNT; a++) {
        if (!s->color) {
            s->attr[a] = styles[a].mono;
            continue;
        }
        if (a == CT_A_NORMAL || init_pair((short)a, styles[a].fg, styles[a].bg) != OK)
            s->attr[a] = styles[a].extra;
        else
            s->attr[a] = COLOR_PAIR(a) | styles[a].extra;
    }
}

int ct_screen_open(struct ct_screen **out, struct ct_err *err)
{
    *out = NULL;
    const char *term = getenv("TERM");
    if (!term || !term[0] || !strcmp(term, "dumb"))
        return ct_err_set(err, CT_EIO, "the terminal type is unknown (TERM is %s)",
                          term && term[0] ? "dumb" : "not set");
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return ct_err_set(err, CT_EIO, "standard input and output are not a terminal");
    if (!strcmp(setlocale(LC_CTYPE, NULL), "C"))
        setlocale(LC_CTYPE, "");
    struct ct_screen *s = ct_xcalloc(1, sizeof *s);
    s->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
    sig_have_modes = tcgetattr(STDIN_FILENO, &sig_modes) == 0;
    s->scr = newterm(NULL, stdout, stdin);
    if (!s->scr) {
        free(s);
        return ct_err_set(err, CT_EIO, "cannot use the terminal '%s'", term);
    }
    set_term(s->scr);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    setup_styles(s);
    sig_restore_len = 0;
    sig_restore_add("sgr0");
    sig_restore_add("cnorm");
    sig_restore_add("rmkx");
    sig_restore_add("rmcup");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = (int)(SA_RESETHAND | SA_NODEFER);
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NCAUGHT; i++)
        sigaction(caught[i], &sa, &s->old[i]);
    ct_set_fatal_hook(restore_dying);
    *out = s;
    return 0;
}

void ct_screen_close(struct ct_screen *s)
{
    if (!s)
        return;
    restore_terminal();
    ct_set_fatal_hook(NULL);
    for (size_t i = 0; i < NCAUGHT; i++)
        sigaction(caught[i], &s->old[i], NULL);
    delscreen(s->scr);
    free(s);
}

void ct_screen_size(const struct ct_screen *s, int *rows, int *cols)
{
    getmaxyx(stdscr, *rows, *cols);
}

bool ct_screen_utf8(const struct ct_screen *s)
{
    return s->utf8;
}

bool ct_screen_color(const struct ct_screen *s)
{
    return s->color;
}

void ct_screen_show(struct ct_screen *s, const struct ct_canvas *c, bool full)
{
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    char run[2048];
    for (int y = 0; y < c->rows && y < rows; y++) {
        int x = 0;
        while (x < c->cols && x < cols) {
            int a = c->cell[y * c->cols + x].attr, x0 = x;
            size_t len = 0;
            while (x < c->cols && x < cols && c->cell[y * c->cols + x].attr == a) {
                const char *ch = c->cell[y * c->cols + x].ch;
                size_t l = strlen(ch);
                if (len + l >= sizeof run)
                    break;
                memcpy(run + len, ch, l);
                len += l;
                x++;
            }
            run[len] = 0;
            attrset(s->attr[a < CT_A_COUNT ? a : 0]);
            mvaddstr(y, x0, run); /* the bottom-right cell may report ERR: harmless */
        }
    }
    attrset(A_NORMAL);
    if (full)
        clearok(curscr, TRUE);
    wnoutrefresh(stdscr);
    doupdate();
}

int ct_screen_key(struct ct_screen *s, int timeout_ms)
{
    wtimeout(stdscr, timeout_ms);
    int ch = wgetch(stdscr);
    switch (ch) {
    case ERR: return CT_KEY_NONE;
    case KEY_UP: return CT_KEY_UP;
    case KEY_DOWN: return CT_KEY_DOWN;
    case KEY_LEFT: return CT_KEY_LEFT;
    case KEY_RIGHT: return CT_KEY_RIGHT;
    case KEY_PPAGE: return CT_KEY_PGUP;
    case KEY_NPAGE: return CT_KEY_PGDN;
    case KEY_HOME: return CT_KEY_HOME;
    case KEY_END: return CT_KEY_END;
    case KEY_BTAB: return CT_KEY_BTAB;
    case KEY_F(1): return CT_KEY_F1;
    case KEY_RESIZE: return CT_KEY_RESIZE;
    case KEY_BACKSPACE:
    case 8: return CT_KEY_BACKSPACE;
    case KEY_ENTER:
    case '\r': return CT_KEY_ENTER;
    default: return ch >= 0 && ch < 0x1000 ? ch : CT_KEY_NONE;
    }
}

#else /* !HAVE_NCURSES */

int ct_screen_open(struct ct_screen **out, struct ct_err *err)
{
    *out = NULL;
    return ct_err_set(err, CT_EUNSUPP, "colltune was built without ncurses (no TUI)");
}
void ct_screen_close(struct ct_screen *s)
{
}
void ct_screen_size(const struct ct_screen *s, int *rows, int *cols)
{
    *rows = 24;
    *cols = 80;
}
bool ct_screen_utf8(const struct ct_screen *s)
{
    return false;
}
bool ct_screen_color(const struct ct_screen *s)
{
    return false;
}
void ct_screen_show(struct ct_screen *s, const struct ct_canvas *c, bool full)
{
}
int ct_screen_key(struct ct_screen *s, int timeout_ms)
{
    return CT_KEY_NONE;
}

#endif
