# kosumi as a GTP engine in a container:
#   docker build -t kosumi .
#   docker run -i --rm kosumi                    # speaks GTP on stdin/stdout (the shipped nets)
#   docker run -i --rm kosumi --capture-all-dead # options go after the image name (CGOS)
#   docker build --build-arg RUN_TESTS=true -t kosumi .   # also run the test suite while building
#
# The build stage compiles the Cython extensions with `pip install .` into a virtual environment;
# the runtime stage gets that environment, gtp_server.py and the weights, and compiles nothing.

FROM python:3.11-slim AS build
ARG RUN_TESTS=false
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && if [ "$RUN_TESTS" = "true" ]; then apt-get install -y --no-install-recommends gnugo; fi \
 && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY pyproject.toml setup.py README.md gtp_server.py ./
COPY engine ./engine
COPY weights ./weights
# Build outputs of a local checkout must not leak into the image: compile from the sources.
RUN find engine \( -name "*.so" -o -name "*.c" \) -delete && pip install --no-cache-dir .
# Smoke test of the installed engine (outside /src, so the installed package is what runs).
RUN mkdir /smoke && cp gtp_server.py /smoke/ && cd /smoke \
 && printf 'protocol_version\nboardsize 9\ngenmove b\nfinal_score\nquit\n' \
    | python gtp_server.py --evaluator uniform --seed 1 > reply.txt \
 && grep -q '^= 2$' reply.txt && grep -Eq '^= ([A-HJ][1-9]|pass)$' reply.txt
# The full suite runs on an in-place build of the same sources (this stage is thrown away).
COPY tests ./tests
COPY benchmarks ./benchmarks
RUN if [ "$RUN_TESTS" = "true" ]; then \
      pip install --no-cache-dir pytest hypothesis "ray>=2.9" "Cython>=3.0" \
      && python setup.py build_ext --inplace \
      && PATH=$PATH:/usr/games python -m pytest -q -p no:cacheprovider; \
    fi

FROM python:3.11-slim AS runtime
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1
WORKDIR /app
COPY gtp_server.py ./
RUN useradd --create-home --shell /usr/sbin/nologin kosumi
USER kosumi
# The installed package finds the shipped nets in /opt/venv/share/kosumi/weights (pyproject's
# data-files); options given to `docker run` (e.g. --weights) are appended.
ENTRYPOINT ["python", "gtp_server.py"]
