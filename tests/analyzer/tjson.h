/* A small strict JSON parser for the analyzer's tests: checks that cutrace's output is valid
 * JSON (RFC 8259: no trailing commas, escapes and UTF-8 checked) and lets tests read values. */
#ifndef TJSON_H
#define TJSON_H

#include <stddef.h>

typedef enum { TJ_NULL, TJ_BOOL, TJ_NUM, TJ_STR, TJ_ARR, TJ_OBJ } tj_type;

typedef struct tj {
    tj_type type;
    double num;          /* TJ_NUM, TJ_BOOL */
    char *str;           /* TJ_STR (decoded) */
    size_t n;            /* TJ_ARR / TJ_OBJ: elements */
    char **keys;         /* TJ_OBJ */
    struct tj **v;
} tj;

/* NULL and a message in err if text is not one valid JSON value. */
tj *tj_parse(const char *text, char *err, size_t errlen);
void tj_free(tj *j);
/* Member of an object (NULL if absent or not an object). */
const tj *tj_get(const tj *o, const char *key);
/* Element of an array. */
const tj *tj_at(const tj *a, size_t i);
/* The first object in array a whose member key is the string value. */
const tj *tj_find(const tj *a, const char *key, const char *value);
/* The value at a dotted path ("breakdown.0.gaps"), NULL if absent. */
const tj *tj_path(const tj *j, const char *path);
/* Number at a dotted path ("breakdown.0.window_ns"); NaN if absent. */
double tj_num(const tj *j, const char *path);
const char *tj_str(const tj *j, const char *path);
size_t tj_len(const tj *j, const char *path);

#endif
