# luban as a container image (docs/design.md §14): a static binary (no cgo: SQLite
# is the pure-Go modernc driver) on distroless/static, run as the non-root
# user 65532, the SQLite database on the /data volume, a HEALTHCHECK on
# /readyz through `luban health` (the image has no shell and no curl).
#
#   docker build -t luban .
#   docker run -p 8080:8080 -v luban-data:/data -e LUBAN_AUTH_TOKEN=… luban
#
# The page is the committed web/dist (make web-dist), so no Node is needed.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/luban ./cmd/luban \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/luban /usr/local/bin/luban
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
ENV LUBAN_ADDR=0.0.0.0:8080 \
    LUBAN_DB=/data/luban.db \
    LUBAN_WORKSPACE=/data \
    LUBAN_LOG_FORMAT=json
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/local/bin/luban", "health"]
ENTRYPOINT ["/usr/local/bin/luban"]
CMD ["serve"]
