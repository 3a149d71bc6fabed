"""Reading the raw results of bench/results: plain `*.json`, or `*.json.gz` as the repository stores older ones
(bench/results/README.md). Imported by the summary scripts beside it."""
import glob, gzip, json, os


def load_json(f):
    """A results file, plain or gzipped."""
    with (gzip.open(f, 'rt') if f.endswith('.gz') else open(f)) as h:
        return json.load(h)


def json_files(d):
    """The *.json and *.json.gz files of folder d, sorted."""
    return sorted(glob.glob(os.path.join(d, '*.json')) + glob.glob(os.path.join(d, '*.json.gz')))


def stem(f):
    """A results file's name without .json or .json.gz."""
    return os.path.basename(f).removesuffix('.gz').removesuffix('.json')
