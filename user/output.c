/* output.c: dispatches to a writer by extension, writing to a temporary
 * file that is renamed into place, so a failure leaves nothing half-written. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "output.h"

struct writer {
	const char *ext;
	int (*write)(const struct tb_profile *p, FILE *f);
};

static const struct writer writers[] = {
	{ ".folded", tb_write_folded },
	{ ".collapsed", tb_write_folded },
	{ ".json", tb_write_tree_json },
	{ ".html", tb_write_html },
};

static const struct writer *find_writer(const char *path)
{
	size_t len = strlen(path);

	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++) {
		size_t el = strlen(writers[i].ext);

		if (len > el && strcmp(path + len - el, writers[i].ext) == 0)
			return &writers[i];
	}
	return NULL;
}

int tb_output_supported(const char *path)
{
	return find_writer(path) != NULL;
}

int tb_write_output(const struct tb_profile *p, const char *path, char *err, size_t errlen)
{
	const struct writer *w = find_writer(path);
	char tmp[4096];
	FILE *f;
	int rc;

	if (!w) {
		snprintf(err, errlen, "%s: unknown output format (use .folded, .json or .html)", path);
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	rc = w->write(p, f);
	if (fclose(f) || rc) {
		snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
