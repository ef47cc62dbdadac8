# A container image of reconcile: a static binary on distroless, running as
# a user without privileges. Build it from the checkout's root:
#
#   docker build --build-arg VERSION=v0.1.0 --build-arg COMMIT=$(git rev-parse HEAD) -t reconcile .
#   docker run --rm -v "$PWD:/work" reconcile plan
#
# The Go version must be go.mod's (internal/dist's test checks it).
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=
ARG COMMIT=
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -mod=readonly \
      -ldflags "-s -w -buildid= -X main.releaseVersion=${VERSION} -X main.releaseCommit=${COMMIT}" \
      -o /out/reconcile ./cmd/reconcile

# Static: CA certificates and time zones, no shell; uid and gid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/reconcile /usr/local/bin/reconcile
USER nonroot:nonroot
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/reconcile"]
