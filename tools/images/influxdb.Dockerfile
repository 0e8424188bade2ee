# InfluxDB 1.x from Debian's package (baked into xcplab/base): the compose
# stack's metrics store, without pulling the official image from a registry.
FROM xcplab/base:latest
RUN mkdir -p /var/lib/influxdb && chown -R influxdb:influxdb /var/lib/influxdb
COPY influxdb.conf /etc/influxdb/xcplab.conf
USER influxdb
EXPOSE 8086
HEALTHCHECK --interval=2s --timeout=2s --retries=30 CMD curl -sf http://127.0.0.1:8086/ping
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["influxd", "-config", "/etc/influxdb/xcplab.conf"]
