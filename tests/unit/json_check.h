/* json_check.h: a strict JSON syntax checker for the tests (RFC 8259: no
 * trailing commas, no NaN, no leading zeros, escapes and surrogate pairs
 * checked, strings valid UTF-8 in shortest form), bounded nesting. */
#ifndef TB_TEST_JSON_CHECK_H
#define TB_TEST_JSON_CHECK_H
#include <stddef.h>
#include <string.h>

#define JSON_MAX_DEPTH 20000

struct js {
	const unsigned char *s, *end;
	int depth;
};

static void js_ws(struct js *j)
{
	while (j->s < j->end && (*j->s == ' ' || *j->s == '\t' || *j->s == '\n' || *j->s == '\r'))
		j->s++;
}

static int js_lit(struct js *j, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(j->end - j->s) < n || memcmp(j->s, lit, n))
		return -1;
	j->s += n;
	return 0;
}

static int js_hex4(struct js *j, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++, j->s++) {
		int c = j->s < j->end ? *j->s : -1;

		if (c >= '0' && c <= '9')
			*v = *v * 16 + (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			*v = *v * 16 + (unsigned)((c | 0x20) - 'a' + 10);
		else
			return -1;
	}
	return 0;
}

/* One UTF-8 sequence at j->s (first byte >= 0x80): shortest form, no
 * surrogates, at most U+10FFFF. */
static int js_utf8(struct js *j)
{
	unsigned c = *j->s++, n, cp, min;

	if (c >= 0xc2 && c <= 0xdf)
		n = 1, cp = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 2, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 3, cp = c & 0x07, min = 0x10000;
	else
		return -1;
	for (unsigned i = 0; i < n; i++, j->s++) {
		if (j->s >= j->end || (*j->s & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (*j->s & 0x3f);
	}
	return cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? -1 : 0;
}

static int js_string(struct js *j)
{
	if (j->s >= j->end || *j->s != '"')
		return -1;
	for (j->s++; j->s < j->end;) {
		unsigned c = *j->s, v, w;

		if (c == '"') {
			j->s++;
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (c >= 0x80) {
			if (js_utf8(j))
				return -1;
			continue;
		}
		j->s++;
		if (c != '\\')
			continue;
		if (j->s >= j->end)
			return -1;
		c = *j->s++;
		if (strchr("\"\\/bfnrt", (int)c) && c)
			continue;
		if (c != 'u' || js_hex4(j, &v))
			return -1;
		if (v >= 0xdc00 && v <= 0xdfff)
			return -1; /* a lone low surrogate */
		if (v >= 0xd800 && v <= 0xdbff &&
		    (js_lit(j, "\\u") || js_hex4(j, &w) || w < 0xdc00 || w > 0xdfff))
			return -1;
	}
	return -1;
}

static int js_digits(struct js *j)
{
	const unsigned char *start = j->s;

	while (j->s < j->end && *j->s >= '0' && *j->s <= '9')
		j->s++;
	return j->s > start ? 0 : -1;
}

static int js_number(struct js *j)
{
	if (j->s < j->end && *j->s == '-')
		j->s++;
	if (j->s < j->end && *j->s == '0')
		j->s++;
	else if (js_digits(j))
		return -1;
	if (j->s < j->end && *j->s == '.') {
		j->s++;
		if (js_digits(j))
			return -1;
	}
	if (j->s < j->end && (*j->s == 'e' || *j->s == 'E')) {
		j->s++;
		if (j->s < j->end && (*j->s == '+' || *j->s == '-'))
			j->s++;
		if (js_digits(j))
			return -1;
	}
	return 0;
}

static int js_value(struct js *j);

/* The members of an object or the elements of an array, after the opening. */
static int js_container(struct js *j, int object)
{
	char close = object ? '}' : ']';

	if (++j->depth > JSON_MAX_DEPTH)
		return -1;
	js_ws(j);
	if (j->s < j->end && *j->s == close) {
		j->s++;
		j->depth--;
		return 0;
	}
	for (;;) {
		if (object) {
			if (js_string(j))
				return -1;
			js_ws(j);
			if (j->s >= j->end || *j->s++ != ':')
				return -1;
		}
		if (js_value(j))
			return -1;
		js_ws(j);
		if (j->s >= j->end)
			return -1;
		if (*j->s == close) {
			j->s++;
			j->depth--;
			return 0;
		}
		if (*j->s++ != ',')
			return -1;
		js_ws(j);
	}
}

static int js_value(struct js *j)
{
	js_ws(j);
	if (j->s >= j->end)
		return -1;
	switch (*j->s) {
	case '{':
		j->s++;
		return js_container(j, 1);
	case '[':
		j->s++;
		return js_container(j, 0);
	case '"':
		return js_string(j);
	case 't':
		return js_lit(j, "true");
	case 'f':
		return js_lit(j, "false");
	case 'n':
		return js_lit(j, "null");
	default:
		return js_number(j);
	}
}

/* 0 if d[0..n) is exactly one JSON value (whitespace around it allowed);
 * else -1 and *at is the offset of the error. */
static int json_valid(const char *d, size_t n, size_t *at)
{
	struct js j = { (const unsigned char *)d, (const unsigned char *)d + n, 0 };
	int rc = js_value(&j);

	js_ws(&j);
	if (!rc && j.s != j.end)
		rc = -1;
	*at = (size_t)((const char *)j.s - d);
	return rc;
}

#endif
