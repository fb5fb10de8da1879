/* SPDX-License-Identifier: MIT */
#include "top_ui.h"

#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "curses_loader.h"
#include "escape.h"
#include "macro.h"

#define KEY_ESCAPE 27
#define HEADER_LINES 4 /* title, node, status, column titles */

struct top_ui {
    const struct curses_api *nc; /* every ncurses call goes through it */
    SCREEN *screen;
    WINDOW *win;  /* the screen's stdscr */
    bool editing; /* typing a filter */
    char filter_before[TOP_FILTER_MAX];
    size_t scroll; /* first row shown */
    size_t rows_shown, rows_total;
};

int top_ui_check_terminal(char *err, size_t err_size) {
    const struct curses_api *nc = NULL;
    const char *term = getenv("TERM"), *reason = NULL;
    char *cup;
    int e = 0, r;

    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        (void)snprintf(err, err_size,
                       "top needs a terminal (stdin and stdout); for a one-shot table use "
                       "'joulestat ps', for the numbers the /metrics URL");
        return -ENOTTY;
    }
    if (!term || !term[0]) {
        (void)snprintf(err, err_size, "TERM is not set: top cannot drive this terminal");
        return -ENOTTY;
    }
    r = curses_api_get(&nc, &reason);
    if (r < 0) {
        (void)snprintf(err, err_size, "%s", reason);
        return r;
    }
    if (nc->setupterm(NULL, STDOUT_FILENO, &e) != OK) {
        (void)snprintf(err, err_size, "unknown terminal type TERM=%s (no terminfo entry)", term);
        return -ENOTTY;
    }
    cup = nc->tigetstr("cup");
    (void)nc->del_curterm(*nc->cur_term_var);
    if (!cup || cup == (char *)-1) {
        (void)snprintf(err, err_size,
                       "TERM=%s cannot move the cursor, which top needs; run it in a full "
                       "terminal (xterm, screen, tmux), or use 'joulestat ps'",
                       term);
        return -ENOTTY;
    }
    return 0;
}

int top_ui_open(struct top_ui **ret) {
    const struct curses_api *nc = NULL;
    const char *reason = NULL;
    struct top_ui *ui;
    int r;

    r = curses_api_get(&nc, &reason);
    if (r < 0)
        return r;
    ui = calloc(1, sizeof(*ui));
    if (!ui)
        return -ENOMEM;
    ui->nc = nc;
    /* Names are UTF-8: ncursesw writes them as such only in the user's locale (LC_CTYPE;
     * numbers keep the C locale's decimal point). */
    (void)setlocale(LC_CTYPE, "");
    ui->screen = nc->newterm(NULL, stdout, stdin);
    if (!ui->screen) {
        free(ui);
        return -ENOTTY;
    }
    (void)nc->set_term(ui->screen);
    ui->win = *nc->stdscr_var;
    (void)nc->cbreak();
    (void)nc->noecho();
    (void)nc->nonl();
    (void)nc->keypad(ui->win, TRUE);
    (void)nc->curs_set(0);
    (void)nc->set_escdelay(25);
    *ret = ui;
    return 0;
}

struct top_ui *top_ui_close(struct top_ui *ui) {
    if (!ui)
        return NULL;
    (void)ui->nc->endwin();
    ui->nc->delscreen(ui->screen);
    free(ui);
    return NULL;
}

/* The screen's size now: ncurses updates both on a resize. */
static int screen_cols(const struct top_ui *ui) {
    return *ui->nc->cols_var;
}

static int screen_lines(const struct top_ui *ui) {
    return *ui->nc->lines_var;
}

/* attron() and attroff() of <curses.h>, on the screen's window. */
static void style_on(const struct top_ui *ui, attr_t a) {
    (void)ui->nc->wattr_on(ui->win, a, NULL);
}

static void style_off(const struct top_ui *ui, attr_t a) {
    (void)ui->nc->wattr_off(ui->win, a, NULL);
}

/* mvhline(y, x, ' ', n) of <curses.h>. */
static void blank_at(const struct top_ui *ui, int y, int x, int n) {
    if (ui->nc->wmove(ui->win, y, x) != ERR)
        (void)ui->nc->whline(ui->win, ' ', n);
}

/* Writes text (already safe) at (y, x), cut to `width` columns and to the screen, padded
 * on the left (right-aligned) or the right. Returns the column after the cell. */
static int put_cell(const struct top_ui *ui, int y, int x, int width, bool right,
                    const char *text) {
    int used, room = MIN(width, screen_cols(ui) - x);
    size_t n;

    if (room <= 0)
        return x + width;
    n = terminal_fit_columns(text, room, &used);
    if (right && used < room)
        blank_at(ui, y, x, room - used);
    if (ui->nc->wmove(ui->win, y, x + (right ? room - used : 0)) != ERR)
        (void)ui->nc->waddnstr(ui->win, text, (int)n);
    return x + width;
}

/* A line of text from x to the right edge. */
static void put_line(const struct top_ui *ui, int y, int x, const char *text) {
    (void)put_cell(ui, y, x, screen_cols(ui) - x, false, text);
}

static void format_power(char *buf, size_t size, bool valid, double w) {
    if (valid)
        (void)snprintf(buf, size, "%.1f", w);
    else
        (void)snprintf(buf, size, "-");
}

static void format_energy(char *buf, size_t size, double j) {
    if (j < 1e9)
        (void)snprintf(buf, size, "%.1f", j);
    else
        (void)snprintf(buf, size, "%.2fG", j / 1e9); /* GJ: a kW for 11 days */
}

static void format_gpus(char *buf, size_t size, uint64_t gpus) {
    size_t used = 0;

    buf[0] = '\0';
    for (unsigned g = 0; g < 64 && used < size; g++)
        if (gpus & (UINT64_C(1) << g)) {
            int n = snprintf(buf + used, size - used, "%s%u", used ? "," : "", g);

            if (n < 0)
                break;
            used += (size_t)n;
        }
    if (!buf[0])
        (void)snprintf(buf, size, "-");
}

/* The workload a process is in, for its last column. */
static void process_workload(const struct top_row *r, char *buf, size_t size) {
    if (r->pod[0] || r->pod_uid[0])
        (void)snprintf(buf, size, "pod %s/%s", r->namespace_[0] ? r->namespace_ : "?",
                       r->pod[0] ? r->pod : r->pod_uid);
    else if (r->job[0])
        (void)snprintf(buf, size, "job %s", r->job);
    else if (r->container_id[0])
        (void)snprintf(buf, size, "container %.12s", r->container_id);
    else if (r->unit[0])
        (void)snprintf(buf, size, "service %s", r->unit);
    else
        (void)snprintf(buf, size, "-");
}

struct column {
    const char *title;
    int width;
    bool right;
    int sort; /* enum top_sort, or -1 */
};

static const struct column numbers[] = {
    {"POWER_W", 9, true, TOP_SORT_POWER},          {"GPU_W", 8, true, TOP_SORT_GPU_POWER},
    {"CPU_W", 8, true, TOP_SORT_CPU_POWER},        {"ENERGY_J", 11, true, TOP_SORT_ENERGY},
    {"GPU_J", 11, true, TOP_SORT_GPU_ENERGY},      {"CPU_J", 11, true, TOP_SORT_CPU_ENERGY},
    {"INTENSITY_W", 12, true, TOP_SORT_INTENSITY},
};

/* On a narrow terminal the names keep room: number columns are left out in this order
 * (the parts before the totals), never POWER_W. */
static const unsigned drop_order[] = {5, 4, 2, 1, 6, 3};
#define NAME_ROOM 24 /* columns the last text column keeps at least, when it can */

/* Which number columns fit beside the text columns of the level (bit i: numbers[i]). */
static unsigned visible_numbers(const struct top_ui *ui, enum top_level level) {
    int need = (level == TOP_LEVEL_PROCESS ? 9 + 6 + 18 : 7 + 7) + NAME_ROOM;
    unsigned shown = (1u << ARRAY_SIZE(numbers)) - 1;

    for (size_t i = 0; i < ARRAY_SIZE(numbers); i++)
        need += numbers[i].width + 1;
    for (size_t i = 0; i < ARRAY_SIZE(drop_order) && need > screen_cols(ui); i++) {
        shown &= ~(1u << drop_order[i]);
        need -= numbers[drop_order[i]].width + 1;
    }
    return shown;
}

/* The text columns of a level, after the numbers; the last takes the rest of the line. */
static const struct column texts[_TOP_LEVEL_MAX][3] = {
    [TOP_LEVEL_PROCESS] = {{"GPUS", 5, false, -1},
                           {"NAME", 17, false, TOP_SORT_NAME},
                           {"WORKLOAD", 0, false, -1}},
    [TOP_LEVEL_CONTAINER] = {{"PROCS", 6, true, -1},
                             {" GPUS", 6, false, -1},
                             {"CONTAINER", 0, false, TOP_SORT_NAME}},
    [TOP_LEVEL_POD] = {{"PROCS", 6, true, -1},
                       {" GPUS", 6, false, -1},
                       {"POD", 0, false, TOP_SORT_NAME}},
    [TOP_LEVEL_JOB] = {{"PROCS", 6, true, -1},
                       {" GPUS", 6, false, -1},
                       {"JOB", 0, false, TOP_SORT_NAME}},
    [TOP_LEVEL_SERVICE] = {{"PROCS", 6, true, -1},
                           {" GPUS", 6, false, -1},
                           {"UNIT", 0, false, TOP_SORT_NAME}},
};

static void draw_titles(const struct top_ui *ui, int y, const struct top_view *v, unsigned shown) {
    int x = 0;

    style_on(ui, A_REVERSE);
    blank_at(ui, y, 0, screen_cols(ui));
    if (v->level == TOP_LEVEL_PROCESS)
        x = put_cell(ui, y, x, 8, true, "PID") + 1;
    for (size_t i = 0; i < ARRAY_SIZE(numbers); i++) {
        bool sorted = numbers[i].sort == (int)v->sort;

        if (!(shown & (1u << i)))
            continue;
        if (sorted)
            style_on(ui, A_BOLD | A_UNDERLINE);
        x = put_cell(ui, y, x, numbers[i].width, true, numbers[i].title) + 1;
        if (sorted)
            style_off(ui, A_BOLD | A_UNDERLINE);
    }
    for (size_t i = 0; i < 3; i++) {
        const struct column *c = &texts[v->level][i];
        bool sorted = c->sort == (int)v->sort;

        if (sorted)
            style_on(ui, A_BOLD | A_UNDERLINE);
        x = put_cell(ui, y, x, c->width ? c->width : screen_cols(ui), c->right, c->title) + 1;
        if (sorted)
            style_off(ui, A_BOLD | A_UNDERLINE);
    }
    style_off(ui, A_REVERSE);
}

static void draw_row(const struct top_ui *ui, int y, const struct top_row *r, enum top_level level,
                     unsigned shown) {
    char raw[3 * TOP_TEXT_MAX + 32], buf[ESCAPED_SIZE(sizeof(raw))];
    char cells[ARRAY_SIZE(numbers)][32];
    int x = 0;

    format_power(cells[0], sizeof(cells[0]), r->power_valid[TOP_GPU] || r->power_valid[TOP_CPU],
                 top_row_power(r));
    format_power(cells[1], sizeof(cells[1]), r->power_valid[TOP_GPU], r->power_w[TOP_GPU]);
    format_power(cells[2], sizeof(cells[2]), r->power_valid[TOP_CPU], r->power_w[TOP_CPU]);
    format_energy(cells[3], sizeof(cells[3]), top_row_energy(r));
    format_energy(cells[4], sizeof(cells[4]), r->energy_j[TOP_GPU]);
    format_energy(cells[5], sizeof(cells[5]), r->energy_j[TOP_CPU]);
    format_power(cells[6], sizeof(cells[6]), r->intensity_valid, r->intensity_w);
    if (level == TOP_LEVEL_PROCESS) {
        (void)snprintf(raw, sizeof(raw), "%u", r->pid);
        x = put_cell(ui, y, x, 8, true, raw) + 1;
    }
    for (size_t i = 0; i < ARRAY_SIZE(numbers); i++)
        if (shown & (1u << i))
            x = put_cell(ui, y, x, numbers[i].width, true, cells[i]) + 1;
    if (level == TOP_LEVEL_PROCESS) {
        format_gpus(raw, sizeof(raw), r->gpus);
        x = put_cell(ui, y, x, 5, false, raw) + 1;
        x = put_cell(ui, y, x, 17, false,
                     escape_terminal(r->name[0] ? r->name : "?", buf, sizeof(buf))) +
            1;
        process_workload(r, raw, sizeof(raw));
        put_line(ui, y, x, escape_terminal(raw, buf, sizeof(buf)));
        return;
    }
    (void)snprintf(raw, sizeof(raw), "%u", r->processes);
    x = put_cell(ui, y, x, 6, true, raw) + 1;
    format_gpus(raw, sizeof(raw), r->gpus);
    x = put_cell(ui, y, x, 6, false, raw) + 1;
    if (level == TOP_LEVEL_POD && r->namespace_[0])
        (void)snprintf(raw, sizeof(raw), "%s/%s", r->namespace_, r->name);
    else if (level == TOP_LEVEL_CONTAINER)
        (void)snprintf(raw, sizeof(raw), "%s (pod %s/%s)", r->name[0] ? r->name : "?",
                       r->namespace_[0] ? r->namespace_ : "?", r->pod[0] ? r->pod : "?");
    else
        (void)snprintf(raw, sizeof(raw), "%s", r->name);
    put_line(ui, y, x, escape_terminal(raw, buf, sizeof(buf)));
}

static void draw_header(const struct top_ui *ui, const struct top_model *m,
                        const struct top_view *v, const struct top_status *st, size_t shown) {
    char line[512], filter[ESCAPED_SIZE(TOP_FILTER_MAX)], power[2][32];
    time_t now = time(NULL);
    struct tm tm;

    (void)localtime_r(&now, &tm);
    (void)snprintf(line, sizeof(line), "joulestat top - %s - %02d:%02d:%02d", st->source,
                   tm.tm_hour, tm.tm_min, tm.tm_sec);
    style_on(ui, A_BOLD);
    put_line(ui, 0, 0, line);
    style_off(ui, A_BOLD);
    for (unsigned c = 0; c < _TOP_COMPONENT_MAX; c++)
        if (m->node_power_valid[c])
            (void)snprintf(power[c], sizeof(power[c]), "%.1f W", m->node_power_w[c]);
        else
            (void)snprintf(power[c], sizeof(power[c]), "%s", m->node_valid[c] ? "-" : "n/a");
    (void)escape_terminal(v->filter, filter, sizeof(filter));
    (void)snprintf(
        line, sizeof(line), "Node GPU %s  CPU %s | %s: %zu of %zu%s | sort: %s%s | filter: %s",
        power[TOP_GPU], power[TOP_CPU], top_level_plural(v->level), shown, m->levels[v->level].n,
        m->levels[v->level].dropped ? " (more not kept)" : "", top_sort_to_string(v->sort),
        v->reverse ? " (reversed)" : "", v->filter[0] ? filter : "-");
    put_line(ui, 1, 0, line);
    if (st->error && st->error[0]) {
        (void)snprintf(line, sizeof(line), "! %s", st->error);
        style_on(ui, A_BOLD);
        put_line(ui, 2, 0, line);
        style_off(ui, A_BOLD);
    } else {
        (void)snprintf(line, sizeof(line),
                       "refresh %.1fs; energy since %s started; power over the last measured "
                       "window%s",
                       st->refresh_seconds, st->local ? "top" : "the exporter",
                       st->log_kept ? "; log messages shown at exit" : "");
        put_line(ui, 2, 0, line);
    }
}

static void draw_footer(const struct top_ui *ui, const struct top_view *v) {
    char line[256], filter[ESCAPED_SIZE(TOP_FILTER_MAX)];

    if (ui->editing) {
        (void)snprintf(line, sizeof(line), "Filter: %s_   (Enter keep, Esc drop)",
                       escape_terminal(v->filter, filter, sizeof(filter)));
        put_line(ui, screen_lines(ui) - 1, 0, line);
        return;
    }
    style_on(ui, A_REVERSE);
    blank_at(ui, screen_lines(ui) - 1, 0, screen_cols(ui));
    put_line(ui, screen_lines(ui) - 1, 0,
             "q Quit  g Group  </> Sort  r Reverse  P Power  E Energy  N Name  I Intensity  "
             "/ Filter  Esc Clear");
    style_off(ui, A_REVERSE);
}

void top_ui_draw(struct top_ui *ui, const struct top_model *m, const struct top_view *v,
                 const struct top_status *st) {
    const struct top_row **rows = NULL;
    size_t n = 0;
    int body = screen_lines(ui) - HEADER_LINES - 1;
    unsigned shown;

    (void)ui->nc->werase(ui->win);
    if (top_view_rows(m, v, &rows, &n) < 0)
        n = 0;
    ui->rows_total = n;
    if (body < 1 || screen_cols(ui) < 20) {
        put_line(ui, 0, 0, "joulestat top: the terminal is too small");
        (void)ui->nc->wrefresh(ui->win);
        free(rows);
        return;
    }
    if (ui->scroll + (size_t)body > n)
        ui->scroll = n > (size_t)body ? n - (size_t)body : 0;
    draw_header(ui, m, v, st, n);
    shown = visible_numbers(ui, v->level);
    draw_titles(ui, HEADER_LINES - 1, v, shown);
    for (int i = 0; i < body && ui->scroll + (size_t)i < n; i++)
        draw_row(ui, HEADER_LINES + i, rows[ui->scroll + (size_t)i], v->level, shown);
    if (n == 0)
        put_line(ui, HEADER_LINES, 0,
                 v->filter[0] ? "(no row matches the filter)"
                              : "(nothing yet at this level: g shows another)");
    ui->rows_shown = (size_t)body;
    draw_footer(ui, v);
    (void)ui->nc->wrefresh(ui->win);
    free(rows);
}

static void edit_filter(struct top_ui *ui, struct top_view *v, int key) {
    size_t len = strlen(v->filter);

    if (key == '\n' || key == '\r' || key == KEY_ENTER) {
        ui->editing = false;
    } else if (key == KEY_ESCAPE) {
        memcpy(v->filter, ui->filter_before, sizeof(v->filter));
        ui->editing = false;
    } else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
        while (len > 0 && ((unsigned char)v->filter[len - 1] & 0xC0) == 0x80)
            len--; /* a whole UTF-8 character */
        if (len > 0)
            len--;
        v->filter[len] = '\0';
    } else if (key >= 0x20 && key < 0x100 && key != 0x7f && len + 1 < sizeof(v->filter)) {
        v->filter[len] = (char)key;
        v->filter[len + 1] = '\0';
    }
    ui->scroll = 0;
}

static void sort_by(struct top_view *v, enum top_sort s) {
    if (v->sort == s)
        v->reverse = !v->reverse;
    else {
        v->sort = s;
        v->reverse = false;
    }
}

bool top_ui_key(struct top_ui *ui, struct top_view *v, int timeout_ms) {
    int key;

    ui->nc->wtimeout(ui->win, timeout_ms);
    key = ui->nc->wgetch(ui->win);
    if (key == ERR || key == KEY_RESIZE)
        return true; /* a resize: the next draw uses the new size */
    if (ui->editing) {
        edit_filter(ui, v, key);
        return true;
    }
    switch (key) {
    case 'q':
    case 'Q':
    case KEY_F(10):
        return false;
    case 'g':
    case '\t':
        v->level = (enum top_level)((v->level + 1) % _TOP_LEVEL_MAX);
        ui->scroll = 0;
        break;
    case 'G':
    case KEY_BTAB:
        v->level = (enum top_level)((v->level + _TOP_LEVEL_MAX - 1) % _TOP_LEVEL_MAX);
        ui->scroll = 0;
        break;
    case '>':
    case 's':
    case '.':
        v->sort = (enum top_sort)((v->sort + 1) % _TOP_SORT_MAX);
        v->reverse = false; /* each column in its natural order first */
        break;
    case '<':
    case ',':
        v->sort = (enum top_sort)((v->sort + _TOP_SORT_MAX - 1) % _TOP_SORT_MAX);
        v->reverse = false;
        break;
    case 'r':
    case 'R':
        v->reverse = !v->reverse;
        break;
    case 'P':
        sort_by(v, TOP_SORT_POWER);
        break;
    case 'E':
        sort_by(v, TOP_SORT_ENERGY);
        break;
    case 'N':
        sort_by(v, TOP_SORT_NAME);
        break;
    case 'I':
        sort_by(v, TOP_SORT_INTENSITY);
        break;
    case '/':
        memcpy(ui->filter_before, v->filter, sizeof(ui->filter_before));
        ui->editing = true;
        break;
    case KEY_ESCAPE:
        v->filter[0] = '\0';
        break;
    case KEY_UP:
        ui->scroll -= ui->scroll > 0;
        break;
    case KEY_DOWN:
        ui->scroll++;
        break;
    case KEY_PPAGE:
        ui->scroll -= MIN(ui->scroll, ui->rows_shown);
        break;
    case KEY_NPAGE:
        ui->scroll += ui->rows_shown;
        break;
    case KEY_HOME:
        ui->scroll = 0;
        break;
    case KEY_END:
        ui->scroll = ui->rows_total;
        break;
    default:
        break;
    }
    return true;
}
